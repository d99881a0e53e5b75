"""harness: the scenes written against the client and the runner that drives them."""
