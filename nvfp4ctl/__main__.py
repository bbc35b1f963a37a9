from nvfp4ctl.cli import main

main()
