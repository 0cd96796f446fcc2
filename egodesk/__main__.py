from egodesk.cli import main

raise SystemExit(main())
