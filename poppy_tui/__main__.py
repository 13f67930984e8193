from poppy_tui.cli.main import main

raise SystemExit(main())
