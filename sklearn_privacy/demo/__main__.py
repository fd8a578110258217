from sklearn_privacy.demo import main

main()
