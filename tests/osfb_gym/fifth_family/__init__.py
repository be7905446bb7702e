"""A fifth family, made only for the test that adding one needs three places."""
