"""``robota.testing``: the offline test kit (scripted and recorded providers, conformance suites).

Public and importable by users' own test suites. It arrives with the agent loop; see the README's
status table.
"""
