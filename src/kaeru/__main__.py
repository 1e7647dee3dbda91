"""`python -m kaeru` is the same as the `kaeru` console script; a Ctrl-C while `kaeru.cli.app` is
imported, before `main` is there to catch it, ends as one inside it does (`cli/interrupt.py`)."""

if __name__ == "__main__":
    try:
        from kaeru.cli.app import main

        main()
    except KeyboardInterrupt:
        from kaeru.cli.interrupt import interrupted

        interrupted()
