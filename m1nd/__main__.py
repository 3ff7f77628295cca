from m1nd.cli.main import run

run()
