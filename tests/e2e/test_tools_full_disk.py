"""End to end: the model's `edit` and `write` on a full disk (a real small tmpfs) fail without touching a byte:
an edited or overwritten file stays as it was, a new file and its new directories are not left behind."""

from __future__ import annotations

from e2e.test_full_disk import fill, mounted_tmpfs

from agent_forge.modes.rpc.client import RpcClient

LINES = "".join(f"line {i:04d} " + "abcdefghij" * 4 + "\n" for i in range(2000)).encode()


def tool_call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


async def test_edit_and_write_on_a_full_tmpfs_change_nothing(agent_env, fake_llm, tmp_path):
    grown = "line 1100 " + "abcdefghij" * 4 + "\n" + "added " * 3500  # 21 KB more
    fake_llm.set_script([
        {"tool_calls": [
            tool_call("edit", path="big.txt", edits=[{"oldText": "line 1100 ", "newText": grown}]),
            tool_call("write", path="other.txt", content="replaced\n" * 3000),
            tool_call("write", path="new.txt", content="fresh\n" * 3000),
            tool_call("write", path="new/deep/dir/file.txt", content="fresh\n" * 3000),
        ]},
        {"text": "The disk is full."},
    ])
    with mounted_tmpfs(tmp_path / "disk", "1m") as disk:
        (disk / "big.txt").write_bytes(LINES)
        (disk / "other.txt").write_bytes(LINES[:5000])
        fill(disk)
        async with await RpcClient.start([], cwd=str(disk), env=agent_env) as client:
            events = await client.prompt_and_wait("grow the file")
        ends = [e for e in events if e["type"] == "tool_execution_end"]
        assert sorted(e["toolName"] for e in ends) == ["edit", "write", "write", "write"]
        for end in ends:
            assert end["isError"] is True
            assert end["result"]["content"][0]["text"].endswith(": No space left on device")
        assert (disk / "big.txt").read_bytes() == LINES
        assert (disk / "other.txt").read_bytes() == LINES[:5000]
        assert sorted(p.name for p in disk.iterdir()) == ["big.txt", "filler", "other.txt"]  # no temp, no new
