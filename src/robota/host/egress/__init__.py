"""Egress (S06): the policy every outbound request passes, and the clients that enforce it.

``_policy`` decides a URL (:func:`~robota.host.check_url`) from the address table (``_table``,
``_address``) and the URL and host readers (``_url``, ``_host``); ``_client`` is the pinned,
redirect-checked :class:`~robota.host.EgressClient` and :class:`~robota.host.EgressTransport`;
``_media_fetch`` fetches the URL parts a provider adapter cannot pass to its vendor.

The public names are re-exported from :mod:`robota.host`; import them from there.
"""
