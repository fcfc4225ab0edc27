"""`coding/mcp/wire.py`: lone surrogates repaired in a server's message; the id of an answer that cannot be read."""

from __future__ import annotations

import pytest

from agent_forge.coding.mcp.wire import answer_id, validate_message


@pytest.mark.parametrize("data", [r'{"jsonrpc":"2.0","id":1,"result":{"t":"a \ud800 b \udc00 \ud83d\ude00"}}',
                                  rb'{"jsonrpc":"2.0","id":1,"result":{"t":"a \ud800 b \udc00 \ud83d\ude00"}}'])
def test_lone_surrogates_become_replacement_characters_and_pairs_stay_one_character(data):
    assert validate_message(data).result == {"t": "a \ufffd b \ufffd \U0001F600"}


def test_a_lone_surrogate_in_a_key_a_notification_and_a_request_is_repaired_too():
    note = validate_message(r'{"jsonrpc":"2.0","method":"notifications/x","params":{"k\udbff":"\udfff"}}')
    request = validate_message(r'{"jsonrpc":"2.0","id":"p\ud800","method":"ping"}')
    assert note.params == {"k\ufffd": "\ufffd"} and request.id == "p\ufffd"


def test_what_is_still_broken_raises_pydantics_error_naming_the_fault():
    with pytest.raises(ValueError, match=r"Invalid JSON: Invalid \\escape at line 1 column 47"):
        validate_message(r'{"jsonrpc":"2.0","id":1,"result":{"t":"\ud800 \x"}}')
    with pytest.raises(ValueError, match=r"JSONRPCResponse.result\n  Input should be a valid dictionary"):
        validate_message(r'{"jsonrpc":"2.0","id":1,"result":"\ud800"}')


@pytest.mark.parametrize("text, expected", [
    ('{"jsonrpc":"2.0","id":5,"result":{"t":"\\x"}}', 5),
    ('{"result":{"id":3,"t":"a \\" } {"},"id":"a\\"b"}', 'a"b'),  # a nested id, brackets and quotes in a string
    ('{"jsonrpc":"2.0","id":5,"method":"ping","params":{"t":"\\x"}}', None),  # the server's request: not ours
    ('{"jsonrpc":"2.0","method":"x","params":{"id":5}}', None),
    ('{"id":1.5}', None), ('{"id":null}', None), ('{"id":true}', None), ("not json at all", None), ("", None),
])
def test_answer_id_is_the_top_level_id_of_an_answer(text, expected):
    assert answer_id(text) == expected
