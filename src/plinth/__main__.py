from plinth.cli.main import main

main()
