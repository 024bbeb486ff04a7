from tcobench.cli import main

main()
