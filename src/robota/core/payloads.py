"""The JSON forms of a run's data, for hosts that carry a run across a process boundary.

A host that moves a run's messages, settings or input between processes — the Temporal layer, a
job queue — writes and reads them with these functions, so what arrives reads back equal to what
was sent, and a value the caller gave is checked the way :meth:`robota.Agent.run` checks it. They
are the journal's own encodings (S40): one JSON form per kind of data, wherever it is stored.

* messages and usage: :func:`encode_message` / :func:`decode_message`, :func:`encode_usage` /
  :func:`decode_usage`;
* message content (a string, or message parts with their bytes as base64):
  :func:`encode_content` / :func:`decode_content`;
* model settings: :func:`settings_to_data` / :func:`settings_from_data`;
* checks of a caller's values: :func:`user_content` (a run's input), :func:`tool_parts` (a tool
  result's media), :func:`check_settings` (a ``settings=`` value).
"""

from __future__ import annotations

from robota.core._parts import decode_content, encode_content, tool_parts, user_content
from robota.core.execution._journal_messages import (
    decode_message,
    decode_usage,
    encode_message,
    encode_usage,
)
from robota.core.providers._settings import check_settings, settings_from_data, settings_to_data

__all__ = [
    "check_settings",
    "decode_content",
    "decode_message",
    "decode_usage",
    "encode_content",
    "encode_message",
    "encode_usage",
    "settings_from_data",
    "settings_to_data",
    "tool_parts",
    "user_content",
]
