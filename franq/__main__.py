from franq.cli import main

main()
