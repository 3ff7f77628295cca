from m1nd.cli.main import main

main()
