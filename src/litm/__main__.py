from litm.cli import main

main()
