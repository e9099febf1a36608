"""`python -m judge.testserver`: an OpenAI-compatible test server on loopback (see
`judge.testing`); prints its base URL and serves until interrupted."""

from judge.testing import main

if __name__ == "__main__":
    raise SystemExit(main())
