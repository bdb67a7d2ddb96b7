"""Credentials (S11, S02): the credential stores, the sealer, API keys and ``$ENV:`` references.

``_credential_file`` holds :class:`~robota.host.FileCredentialStore` and
:class:`~robota.host.KeyringCredentialStore`, ``_sealer`` the :class:`~robota.host.Sealer`,
``_api_keys`` the one API-key lookup order, ``_env`` the :class:`~robota.host.ProcessEnvResolver`.

The public names are re-exported from :mod:`robota.host`; import them from there.
"""
