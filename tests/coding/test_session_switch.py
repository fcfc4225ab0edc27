"""`--no-session` is a choice for the whole process: after `switch_session` to a file that file is the session,
but every session started from it (`successor_store`: new_session, fork, clone) stays in memory."""

from __future__ import annotations

from pathlib import Path

from agent_forge.coding.session.store import SessionStore
from agent_forge.sdk import create_agent_session, faux_model


def session_file(tmp_path: Path) -> Path:
    store = SessionStore.create(tmp_path / "project", tmp_path / "sessions")
    store.append_message({"role": "user", "content": "in the file", "timestamp": 1})
    store.close()
    assert store.path is not None
    return store.path


def make_session(tmp_path: Path, **options):
    return create_agent_session(cwd=str(tmp_path / "project"), model=faux_model(key=f"switch-{tmp_path.name}"),
                                agent_dir=tmp_path / "agent", session_dir=str(tmp_path / "sessions"), tools=[],
                                **options)


async def test_no_session_choice_survives_a_switch_to_a_file(tmp_path: Path) -> None:
    path = session_file(tmp_path)
    session = make_session(tmp_path, no_session=True)
    await session.switch_session(str(path))
    assert session.store.path == path and session.store.no_session
    successor = session.switching.successor_store(str(path))
    assert successor.path is None and successor.no_session
    [entry] = session.store.entries
    assert (await session.fork(entry["id"]))["cancelled"] is False and session.store.path is None
    await session.switch_session(str(path))
    await session.clone()
    assert session.store.path is None and session.store.entry_count > 0
    assert sorted((tmp_path / "sessions").rglob("*.jsonl")) == [path]
    await session.close()


async def test_a_file_session_starts_new_sessions_as_files(tmp_path: Path) -> None:
    path = session_file(tmp_path)
    session = make_session(tmp_path)
    await session.switch_session(str(path))
    assert not session.store.no_session
    successor = session.switching.successor_store(str(path))
    assert successor.path is not None and successor.path.parent == path.parent
    assert successor.header["parentSession"] == str(path)
    successor.close()
    await session.close()


async def test_tree_moves_take_the_configuration_of_the_branch_they_reach(tmp_path: Path) -> None:
    """Seed 003: in-place tree navigation replays the branch's `context_window_change` (and its model and
    thinking level) and emits `context_window_changed`, appending nothing."""
    from agent_forge.sdk import FauxResponse, set_faux_responses

    key = f"tree-{tmp_path.name}"
    model = {**faux_model(key=key, reasoning=True, context_window=400_000),
             "contextWindowOptions": [400_000, 1_000_000]}
    set_faux_responses([FauxResponse(text="one"), FauxResponse(text="two")], key)
    session = create_agent_session(cwd=str(tmp_path / "project"), model=model, agent_dir=tmp_path / "agent",
                                   session_dir=str(tmp_path / "sessions"), tools=[], thinking="low")
    events: list[dict] = []
    session.subscribe(events.append)
    await session.prompt_and_wait("first")
    first_answer = session.store.leaf_id
    session.set_thinking_level("high")
    session.model_control.set_context_window("1m")
    await session.prompt_and_wait("second")
    leaf, count = session.store.leaf_id, session.store.entry_count
    events.clear()

    await session.navigate_tree(first_answer)
    back = (session.agent.thinking_level, session.model["contextWindow"])
    await session.navigate_tree(leaf)
    forth = (session.agent.thinking_level, session.model["contextWindow"])

    assert back == ("low", 400_000) and forth == ("high", 1_000_000)
    changes = [(e["previousContextWindow"], e["contextWindow"]) for e in events
               if e["type"] == "context_window_changed"]
    assert changes == [(1_000_000, 400_000), (400_000, 1_000_000)]
    assert session.store.entry_count == count  # replayed, not recorded
    await session.close()


async def test_save_copy_writes_a_new_session_and_leaves_this_one_as_it_was(tmp_path: Path) -> None:
    """ACP's `/fork` and `/clone`: the copy is a released file with `parentSession` and the model; the session
    keeps its store, leaf and messages; a plugin veto writes nothing."""
    path = session_file(tmp_path)
    session = make_session(tmp_path, session_file=str(path))
    session.store.append_message({"role": "user", "content": "second", "timestamp": 2})
    first, second = [e["id"] for e in session.store.entries if e["type"] == "message"]
    leaf, store, messages = session.store.leaf_id, session.store, list(session.messages)
    copy = await session.switching.save_copy(second)
    assert (copy["cancelled"], copy["text"]) == (False, "second")
    opened = SessionStore.open(copy["path"], lock=True)  # released: another process can open and lock it
    assert opened.session_id == copy["sessionId"] and opened.header["parentSession"] == str(path)
    assert [e["message"]["content"] for e in opened.entries if e["type"] == "message"] == ["in the file"]
    assert opened.build_context().model is not None  # a resume of the copy finds the model
    opened.close()
    clone = await session.switching.save_copy(None)
    assert [e["id"] for e in SessionStore.open(clone["path"]).entries if e["type"] == "message"] == [first, second]
    assert session.store is store and session.store.leaf_id == leaf and session.messages == messages

    from agent_forge.coding.hooks import SessionHooks

    class Veto(SessionHooks):
        async def before_session_change(self, action, details):
            self.seen = (action, details)
            return True

    session.hooks = veto = Veto()
    files = sorted((tmp_path / "sessions").rglob("*.jsonl"))
    assert (await session.switching.save_copy(second))["cancelled"] is True
    assert veto.seen == ("fork", {"entryId": second}) and sorted((tmp_path / "sessions").rglob("*.jsonl")) == files
    await session.close()
