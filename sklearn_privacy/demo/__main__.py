from sklearn_privacy.demo import main

raise SystemExit(main())
