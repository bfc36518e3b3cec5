from medfc.cli import main

raise SystemExit(main())
