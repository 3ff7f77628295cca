import sys

from m1nd.gitops.hookstamp import answer

if not answer(sys.argv[1:]):  # a checkout's hook with nothing new is done before the CLI loads
    from m1nd.cli.main import run

    run()
