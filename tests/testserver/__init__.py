"""The test server's own tests (judge.testing): a user tool, tested apart from the product."""
