"""The on-disk record of queued messages (`coding/queue_journal.py`): pending entries, their settling, restore."""

from __future__ import annotations

from agent_forge.agent.agent import Agent
from agent_forge.coding.intake import user_message
from agent_forge.coding.queue_journal import QueueJournal, pending_queue
from agent_forge.coding.session.entries import QUEUE_PENDING, QUEUE_SETTLED
from agent_forge.coding.session.store import SessionStore


def journal(store: SessionStore) -> tuple[QueueJournal, Agent, list[dict]]:
    events: list[dict] = []
    agent = Agent(model=None, emit=events.append)
    return QueueJournal(agent=agent, store=lambda: store), agent, events


def queue(journal: QueueJournal, agent: Agent, text: str, kind: str) -> dict:
    message = user_message(text)
    journal.record(message, kind)
    (agent.steer if kind == "steer" else agent.follow_up)(message)
    return message


def texts(found) -> list[tuple[str, str]]:
    return [(kind, message["content"][0]["text"]) for _, kind, message in found]


def test_recorded_messages_are_pending_in_order_with_their_kind(tmp_path):
    store = SessionStore.in_memory(tmp_path)
    jour, agent, _ = journal(store)
    queue(jour, agent, "s1", "steer")
    queue(jour, agent, "f1", "followUp")
    queue(jour, agent, "s2", "steer")
    assert texts(pending_queue(store.entries, store.session_id)) == [("steer", "s1"), ("followUp", "f1"),
                                                                      ("steer", "s2")]


def test_an_equal_message_entry_after_it_settles_a_pending_entry(tmp_path):
    store = SessionStore.in_memory(tmp_path)
    jour, agent, _ = journal(store)
    steer = queue(jour, agent, "s1", "steer")
    queue(jour, agent, "f1", "followUp")
    store.append_message(steer)  # its delivery (message_end)
    assert texts(pending_queue(store.entries, store.session_id)) == [("followUp", "f1")]


def test_an_equal_message_before_it_does_not_settle_it(tmp_path):
    store = SessionStore.in_memory(tmp_path)
    jour, agent, _ = journal(store)
    message = user_message("again")
    store.append_message(message)
    jour.record(message, "steer")
    assert texts(pending_queue(store.entries, store.session_id)) == [("steer", "again")]


def test_clear_settles_what_the_queue_held_in_one_entry(tmp_path):
    store = SessionStore.in_memory(tmp_path)
    jour, agent, events = journal(store)
    queue(jour, agent, "s1", "steer")
    queue(jour, agent, "f1", "followUp")
    steering, follow_up = jour.clear()
    assert [m["content"][0]["text"] for m in [*steering, *follow_up]] == ["s1", "f1"]
    assert pending_queue(store.entries, store.session_id) == []
    [settled] = [e for e in store.entries if e.get("customType") == QUEUE_SETTLED]
    assert settled["data"]["reason"] == "cleared" and len(settled["data"]["ids"]) == 2
    assert events[-1] == {"type": "queue_update", "steering": [], "followUp": []}


def test_clearing_an_empty_queue_writes_nothing(tmp_path):
    store = SessionStore.in_memory(tmp_path)
    jour, _, _ = journal(store)
    jour.clear()
    assert store.entries == []


def test_delivered_messages_are_not_settled_again_by_a_later_clear(tmp_path):
    store = SessionStore.in_memory(tmp_path)
    jour, agent, _ = journal(store)
    queue(jour, agent, "s1", "steer")
    agent.steering_queue.clear()  # taken by a run (its message entry settles it on disk)
    queue(jour, agent, "f1", "followUp")
    jour.clear()
    [settled] = [e for e in store.entries if e.get("customType") == QUEUE_SETTLED]
    assert len(settled["data"]["ids"]) == 1


def test_restore_queues_pending_messages_once_and_a_copy_in_another_session_never(tmp_path):
    store = SessionStore.in_memory(tmp_path)
    jour, agent, _ = journal(store)
    queue(jour, agent, "s1", "steer")
    queue(jour, agent, "f1", "followUp")
    reopened = SessionStore.in_memory(tmp_path, entries=store.entries, session_id=store.session_id)
    again, agent2, events = journal(reopened)
    assert again.restore() == 2
    assert again.restore() == 0  # already queued in this process
    assert agent2.queue_texts() == {"steering": ["s1"], "followUp": ["f1"]}
    assert events[-1] == {"type": "queue_update", "steering": ["s1"], "followUp": ["f1"]}
    assert agent2.steering_queue[0] is not reopened.entries[0]["data"]["message"]  # the store keeps its own
    copy = SessionStore.in_memory(tmp_path, entries=store.entries)  # a fork or clone: another session id
    assert journal(copy)[0].restore() == 0


def test_a_restored_message_cleared_is_settled_under_its_first_entry(tmp_path):
    store = SessionStore.in_memory(tmp_path)
    jour, agent, _ = journal(store)
    queue(jour, agent, "s1", "steer")
    reopened = SessionStore.in_memory(tmp_path, entries=store.entries, session_id=store.session_id)
    again, _, _ = journal(reopened)
    again.restore()
    again.clear()
    assert pending_queue(reopened.entries, reopened.session_id) == []


def test_a_restored_message_delivered_is_settled_by_its_message_entry(tmp_path):
    store = SessionStore.in_memory(tmp_path)
    jour, agent, _ = journal(store)
    queue(jour, agent, "s1", "steer")
    reopened = SessionStore.in_memory(tmp_path, entries=store.entries, session_id=store.session_id)
    again, agent2, _ = journal(reopened)
    again.restore()
    reopened.append_message(agent2.steering_queue.pop())
    assert pending_queue(reopened.entries, reopened.session_id) == []


def test_unusable_pending_entries_are_left_alone(tmp_path):
    store = SessionStore.in_memory(tmp_path)
    sid = store.session_id
    store.append_custom(QUEUE_PENDING, {"kind": "steer", "message": {"role": "user"}, "sessionId": sid})
    store.append_custom(QUEUE_PENDING, {"kind": "sideways", "message": user_message("x"), "sessionId": sid})
    store.append_custom(QUEUE_PENDING, {"kind": "steer", "message": user_message("x")})
    store.append_custom(QUEUE_PENDING, "not a dict")
    store.append_custom(QUEUE_SETTLED, {"ids": "not a list"})
    store.append_custom(QUEUE_SETTLED, {"ids": [1, None]})
    assert pending_queue(store.entries, sid) == []


def test_a_value_json_cannot_hold_is_made_safe_in_the_message_and_its_entry_alike(tmp_path):
    store = SessionStore.in_memory(tmp_path)
    jour, agent, _ = journal(store)
    message = user_message("look", [{"type": "image", "data": {1, 2}, "mimeType": "image/png"}])
    jour.record(message, "steer")
    [entry] = store.entries
    assert isinstance(message["content"][1]["data"], str)
    assert entry["data"]["message"] == message
    store.append_message(message)
    assert pending_queue(store.entries, store.session_id) == []


def test_holds_custom_type_finds_the_type_anywhere_and_nothing_else():
    from agent_forge.coding.session.entries import QUEUE_PENDING, USER_BASH_PENDING, holds_custom_type

    plain = [{"type": "message", "id": str(i)} for i in range(1000)]
    others = [{"type": "custom", "customType": USER_BASH_PENDING}, {"type": "custom", "customType": 7},
              {"type": "custom", "customType": None}, {"type": "custom_message", "customType": QUEUE_PENDING + "x"}]
    assert not holds_custom_type(plain + others, QUEUE_PENDING)
    assert holds_custom_type(plain + others + [{"type": "custom", "customType": QUEUE_PENDING}], QUEUE_PENDING)
    assert holds_custom_type(others, USER_BASH_PENDING) and not holds_custom_type([], USER_BASH_PENDING)
