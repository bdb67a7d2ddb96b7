"""A hand-built, deterministic llama-architecture GGUF model for tests against a real llama-server.

Why: random weights make a real server produce garbage, so an adapter test against one could
assert nothing. This model is written at test time (about 0.5 MB of f32, well under a second) with
weights set by hand so that llama.cpp's ``llama-server`` answers every request predictably:

* tools offered (the chat template renders ``<tools>``) and no ``<tool_response>`` in the prompt:
  the reply is one Hermes-style ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``;
* a tool result in the prompt: the text :data:`REPLY_AFTER_TOOL`, then end of turn;
* no tools: the text :data:`PLAIN_REPLY`, then end of turn;
* under a grammar (tool calls, ``response_format`` json_object / json_schema): the smallest valid
  JSON the grammar allows, with every free string filled with :data:`STRING_FILL`.

How the weights do that (residual stream of :data:`N_EMBD` dimensions, see ``_Dim``):

* Every token embedding is ``bias + one identity dimension``: the tokens that start or continue a
  scripted reply, the two marker tokens ``<tools>`` / ``<tool_response>``, and "anything else"
  each own a dimension, so every position has the same norm and RMS norms rescale uniformly.
* Layer 0's attention has two heads, one per marker. Only the query of a newline token (the last
  token of ``<|im_start|>assistant\\n``, where the reply starts) looks for the marker; every other
  query is pushed away from it. Each head copies "marker seen" into a flag dimension. The query
  and key use the last rotary pair of the head with a RoPE base of 1e9, so the rotation is
  negligible at any position and the flag does not depend on distance.
* The output matrix is a bigram table: the next token depends only on the previous token (plus,
  for the newline, on the two flags), with margins of tens of thousands of logits, so sampling is
  greedy at any temperature. Where a grammar forbids the scripted token, a fixed preference order
  through the bias dimension decides (see ``_preference_order``): end of turn, closing
  ``"``/``}``/``]``, ``</tool_call>``, then letters, digits, ``_``, ``-``, other punctuation, opening
  brackets, separators, space, multi-character tokens, byte tokens, whitespace last. So objects
  and arrays close as soon as the grammar allows, values are strings when any type is allowed,
  integers and numbers become ``0`` and booleans ``false``.

Choosing among several tools: the grammar llama-server builds from the tools allows exactly the
offered names, so with one tool the name is always right. With several, the preference order picks
the name that sorts first (``a``-``z`` < ``A``-``Z`` < ``0``-``9`` < ``_`` < ``-``, a name that is a
prefix of another first). Tests that rely on "the model calls the first tool" must list the tools
in that order.

The chat template is the Hermes 2 Pro / Qwen2.5-Instruct format (``<tool_call>`` JSON inside
``<|im_start|>``/``<|im_end|>`` turns), written here from the published format description, which
llama-server's differential template analysis recognises (its log: ``tool_mode: JSON_NATIVE``,
``per_call_start: '<tool_call>\\n'``, ``chat format: peg-native``). Its lazy tool-call grammar
triggers on ``<tool_call>`` plus a newline, so the model writes exactly that, then the JSON, then
``</tool_call>`` with no whitespace in between.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Final

import gguf
import numpy as np
import numpy.typing as npt

PLAIN_REPLY: Final = "Hello from the tiny model."
"""The whole reply when no tools are offered and no tool result is in the prompt."""

REPLY_AFTER_TOOL: Final = "The answer is ready."
"""The whole reply when a tool result (``<tool_response>``) is in the prompt."""

STRING_FILL: Final = "lorem ipsum"
"""The content of every JSON string the model is free to write (arguments, structured output).

It contains a space, which no OpenAI function name may contain, so it never competes with a tool
name in the grammar."""

N_EMBD: Final = 64
N_HEAD: Final = 4
N_LAYER: Final = 2
N_FF: Final = 128
N_CTX: Final = 4096
HEAD_DIM: Final = N_EMBD // N_HEAD

_BOS: Final = "<s>"
_EOS: Final = "<|im_end|>"
_TOOL_TOKENS: Final = (
    "<tool_call>",
    "</tool_call>",
    "<tools>",
    "</tools>",
    "<tool_response>",
    "</tool_response>",
)

# SentencePiece spells a space as U+2581; llama.cpp's detokenizer turns it back into a space.
_SPACE: Final = "\u2581"


def _words(text: str) -> list[str]:
    """Split a reply into word tokens, each word after the first carrying its leading space."""
    first, *rest = text.split(" ")
    return [first, *(_SPACE + word for word in rest)]


_PLAIN_WORDS: Final = _words(PLAIN_REPLY)
_AFTER_TOOL_WORDS: Final = _words(REPLY_AFTER_TOOL)
_FILL_TOKEN: Final = STRING_FILL.replace(" ", _SPACE)
_NEWLINE: Final = "<0x0A>"

# Logit scales (before the output RMS norm, which scales a whole position by 0.7-1.0).
_STEP: Final = 40.0  # between two neighbours in the preference order
_SCRIPT: Final = 400_000.0  # the scripted successor of a token
_FLAG: Final = 100_000.0  # how much a flag moves the choice after the newline
_ATTN: Final = 240.0  # query scale: marker score +2*_ATTN/4 for the newline, -_ATTN/4 otherwise

# The chat template: the Hermes 2 Pro / Qwen2.5-Instruct turn and tool-call format. Every literal
# is a Jinja string expression so that whitespace control (``{%-``) never eats a newline.
CHAT_TEMPLATE: Final = r"""
{%- if tools %}
{{- '<|im_start|>system\n' }}
{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] }}
{%- else %}{{- 'You are a helpful assistant.' }}{%- endif %}
{{- '\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' }}
{{- 'You are provided with function signatures within <tools></tools> XML tags:\n<tools>' }}
{%- for tool in tools %}{{- '\n' }}{{- tool | tojson }}{%- endfor %}
{{- '\n</tools>\n\nFor each function call, return a json object with function name and ' }}
{{- 'arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n' }}
{{- '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' }}
{%- elif messages[0]['role'] == 'system' %}
{{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first)
      or (message.role == 'assistant' and not message.tool_calls) %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant' }}
{%- if message.content %}{{- '\n' + message.content }}{%- endif %}
{%- for tool_call in message.tool_calls %}
{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}
{{- '\n<tool_call>\n{"name": "' + tool_call.name + '", "arguments": ' }}
{%- if tool_call.arguments is string %}{{- tool_call.arguments }}
{%- else %}{{- tool_call.arguments | tojson }}{%- endif %}
{{- '}\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- elif message.role == 'tool' %}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}
{{- '\n<tool_response>\n' + message.content + '\n</tool_response>' }}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\n' }}{%- endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
"""


class _Dim(enum.IntEnum):
    """Named dimensions of the residual stream; the scripted tokens' dimensions follow these."""

    BIAS = 0  # 1 in every token: carries the preference order
    TOOLS_SEEN = 1  # written by attention head 0 at a newline: "<tools>" occurred earlier
    RESULT_SEEN = 2  # written by attention head 1 at a newline: "<tool_response>" occurred
    TOOLS_MARK = 3  # identity of "<tools>"
    RESULT_MARK = 4  # identity of "<tool_response>"
    OTHER = 5  # identity shared by every token that is neither scripted nor a marker
    FIRST_SCRIPTED = 6


def _vocabulary() -> tuple[list[str], list[int]]:
    """The token texts and their llama.cpp token types, in id order."""
    tokens: list[str] = ["<unk>", _BOS, "</s>", "<|im_start|>", _EOS]
    types: list[int] = [
        gguf.TokenType.UNKNOWN,
        gguf.TokenType.CONTROL,
        gguf.TokenType.CONTROL,
        gguf.TokenType.CONTROL,
        gguf.TokenType.CONTROL,
    ]
    # llama.cpp's SentencePiece tokenizer falls back to these for any character not in the
    # vocabulary, and throws if one it needs is missing.
    tokens += [f"<0x{byte:02X}>" for byte in range(256)]
    types += [gguf.TokenType.BYTE] * 256
    normal = [_SPACE, *(chr(code) for code in range(0x21, 0x7F))]
    normal += [*_PLAIN_WORDS, *_AFTER_TOOL_WORDS, _FILL_TOKEN]
    tokens += normal
    types += [gguf.TokenType.NORMAL] * len(normal)
    tokens += _TOOL_TOKENS
    types += [gguf.TokenType.USER_DEFINED] * len(_TOOL_TOKENS)
    if len(set(tokens)) != len(tokens):
        raise ValueError("the reply words must not repeat or collide with other tokens")
    return tokens, types


def _preference_order(tokens: list[str]) -> list[str]:
    """All tokens, most preferred first: what the model writes when a grammar forbids its script."""
    # '"' before "</tool_call>": a JSON string may contain the text "</tool_call>".
    closing = [_EOS, '"', "}", "]", "</tool_call>"]
    name_chars = [
        *"abcdefghijklmnopqrstuvwxyz",
        *"ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        *"0123456789",
        "_",
        "-",
    ]
    opening = ["{", "[", ":", ","]
    taken = set(closing + name_chars + opening)
    punctuation = [chr(c) for c in range(0x21, 0x7F) if chr(c) not in taken]
    multi = [*_PLAIN_WORDS, *_AFTER_TOOL_WORDS, _FILL_TOKEN]
    whitespace = ["<0x0A>", "<0x09>", "<0x0D>", "<0x20>"]
    first = [*closing, *name_chars, *punctuation, *opening, _SPACE, *multi]
    rest = [t for t in tokens if t not in first and t not in whitespace]
    order = [*first, *rest, *whitespace]
    if sorted(order) != sorted(tokens):
        raise AssertionError("the preference order must rank every token exactly once")
    return order


def _script() -> dict[str, str]:
    """The bigram table: previous token -> next token (the newline's choice depends on flags)."""
    # llama-server's lazy tool-call grammar triggers on "<tool_call>\n" (the template's spelling).
    script: dict[str, str] = {'"': _FILL_TOKEN, "<tool_call>": _NEWLINE}
    script.update(
        (current, following)
        for words in (_PLAIN_WORDS, _AFTER_TOOL_WORDS)
        for current, following in zip(words, [*words[1:], _EOS], strict=True)
    )
    return script


def _weights(tokens: list[str]) -> dict[str, npt.NDArray[np.float32]]:
    """Every tensor of the model, by GGUF tensor name, as (out, in) float32 matrices."""
    n_vocab = len(tokens)
    index = {token: i for i, token in enumerate(tokens)}
    script = _script()
    scripted = [_NEWLINE, *script]
    identity = {token: _Dim.FIRST_SCRIPTED + i for i, token in enumerate(scripted)}
    identity["<tools>"] = _Dim.TOOLS_MARK
    identity["<tool_response>"] = _Dim.RESULT_MARK
    if max(identity.values()) >= N_EMBD:
        raise ValueError("too many scripted tokens for the embedding width")

    embed = np.zeros((n_vocab, N_EMBD), dtype=np.float32)
    embed[:, _Dim.BIAS] = 1.0
    for token, i in index.items():
        embed[i, identity.get(token, _Dim.OTHER)] = 1.0

    # Every embedding has norm sqrt(2), so an RMS norm divides by sqrt(2 / N_EMBD); this weight
    # undoes that, and the attention reads the embedding values themselves.
    unit_norm = np.full(N_EMBD, np.sqrt(2.0 / N_EMBD), dtype=np.float32)

    # Layer 0 attention: head h uses its last rotary pair (dims 14, 15 of the head), which a RoPE
    # base of 1e9 turns by at most ~5e-5 rad over the context, for the query/key match, and its
    # first dimension for the value.
    wq = np.zeros((N_EMBD, N_EMBD), dtype=np.float32)
    wk = np.zeros((N_EMBD, N_EMBD), dtype=np.float32)
    wv = np.zeros((N_EMBD, N_EMBD), dtype=np.float32)
    wo = np.zeros((N_EMBD, N_EMBD), dtype=np.float32)
    newline = identity[_NEWLINE]
    for head, (mark, flag) in enumerate(
        ((_Dim.TOOLS_MARK, _Dim.TOOLS_SEEN), (_Dim.RESULT_MARK, _Dim.RESULT_SEEN))
    ):
        match = head * HEAD_DIM + HEAD_DIM - 2
        value = head * HEAD_DIM
        # query: +2*_ATTN at a newline, -_ATTN elsewhere; key: 1 at the marker, 0 elsewhere.
        # With the 1/sqrt(HEAD_DIM) scale a newline scores a marker 120 above any other token
        # (all of whose values are 0); every other query scores the marker 60 below the rest.
        wq[match, newline] = 3.0 * _ATTN
        wq[match, _Dim.BIAS] = -_ATTN
        wk[match, mark] = 1.0
        wv[value, mark] = 1.0
        wo[flag, value] = 1.0

    # The output matrix: the preference order through the bias dimension, the script through the
    # identity dimensions, and the newline's three-way choice through the flags.
    output = np.zeros((n_vocab, N_EMBD), dtype=np.float32)
    order = _preference_order(tokens)
    for rank, token in enumerate(order):
        output[index[token], _Dim.BIAS] = _STEP * (len(order) - rank)
    for previous, following in script.items():
        output[index[following], identity[previous]] += _SCRIPT
    tool_call = index["<tool_call>"]
    plain = index[_PLAIN_WORDS[0]]
    after_tool = index[_AFTER_TOOL_WORDS[0]]
    # newline, no flag: plain text wins by 0.5 * _FLAG; tools only: the tool call wins by
    # _FLAG; a result (with or without tools): the after-tool text wins by _FLAG.
    output[plain, newline] += _SCRIPT + 0.5 * _FLAG
    output[tool_call, newline] += _SCRIPT
    output[tool_call, _Dim.TOOLS_SEEN] += 1.5 * _FLAG
    output[tool_call, _Dim.RESULT_SEEN] -= 3.0 * _FLAG
    output[after_tool, newline] += _SCRIPT
    output[after_tool, _Dim.RESULT_SEEN] += 1.5 * _FLAG

    tensors: dict[str, npt.NDArray[np.float32]] = {
        "token_embd.weight": embed,
        "output_norm.weight": unit_norm.copy(),
        "output.weight": output,
    }
    zeros_ff_in = np.zeros((N_FF, N_EMBD), dtype=np.float32)
    zeros_ff_out = np.zeros((N_EMBD, N_FF), dtype=np.float32)
    zeros_attn = np.zeros((N_EMBD, N_EMBD), dtype=np.float32)
    for layer in range(N_LAYER):
        first = layer == 0
        prefix = f"blk.{layer}"
        tensors[f"{prefix}.attn_norm.weight"] = unit_norm.copy()
        tensors[f"{prefix}.attn_q.weight"] = wq if first else zeros_attn.copy()
        tensors[f"{prefix}.attn_k.weight"] = wk if first else zeros_attn.copy()
        tensors[f"{prefix}.attn_v.weight"] = wv if first else zeros_attn.copy()
        tensors[f"{prefix}.attn_output.weight"] = wo if first else zeros_attn.copy()
        # The feed-forward blocks contribute nothing: the residual passes through unchanged.
        tensors[f"{prefix}.ffn_norm.weight"] = unit_norm.copy()
        tensors[f"{prefix}.ffn_gate.weight"] = zeros_ff_in.copy()
        tensors[f"{prefix}.ffn_up.weight"] = zeros_ff_in.copy()
        tensors[f"{prefix}.ffn_down.weight"] = zeros_ff_out.copy()
    return tensors


def write_tiny_model(path: Path | str) -> Path:
    """Write the deterministic tiny model as a GGUF file at ``path`` and return that path."""
    target = Path(path)
    tokens, types = _vocabulary()
    writer = gguf.GGUFWriter(str(target), "llama")
    writer.add_name("robota-tiny-deterministic")
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_feed_forward_length(N_FF)
    writer.add_block_count(N_LAYER)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(HEAD_DIM)
    writer.add_rope_freq_base(1e9)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * len(tokens))
    writer.add_token_types(types)
    writer.add_unk_token_id(tokens.index("<unk>"))
    writer.add_bos_token_id(tokens.index(_BOS))
    writer.add_eos_token_id(tokens.index(_EOS))
    writer.add_eot_token_id(tokens.index(_EOS))
    writer.add_pad_token_id(tokens.index("</s>"))
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    # Without this every grammar-constrained request fails with "Failed to initialize samplers".
    writer.add_add_space_prefix(False)
    writer.add_chat_template(CHAT_TEMPLATE)
    for name, tensor in _weights(tokens).items():
        writer.add_tensor(name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return target
