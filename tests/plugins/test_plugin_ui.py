"""The interaction API: request shapes, answers, cancellation, timeouts, abort and shutdown, headless defaults."""

from __future__ import annotations

import asyncio

import pytest

from agent_forge.plugins.ui import PluginUI, RpcUI


class Recorder:
    def __init__(self):
        self.events: list[dict] = []
        self.arrived = asyncio.Event()

    def __call__(self, event):
        self.events.append(event)
        self.arrived.set()

    async def next(self):
        await self.arrived.wait()
        self.arrived.clear()
        return self.events[-1]


async def open_dialog(ui, recorder, call):
    task = asyncio.ensure_future(call)
    request = await recorder.next()
    return task, request


async def test_select_request_shape_and_answer():
    recorder = Recorder()
    ui = RpcUI(recorder)
    task, request = await open_dialog(ui, recorder, ui.select("Pick", ["A", "B"], timeout=2.5))
    assert request == {"type": "extension_ui_request", "id": request["id"], "method": "select", "title": "Pick",
                       "options": ["A", "B"], "timeout": 2500}
    assert ui.pending_ids == [request["id"]]
    assert ui.resolve({"type": "extension_ui_response", "id": request["id"], "value": "B"}) is True
    assert await task == "B"
    assert ui.pending_ids == []
    assert ui.resolve({"id": request["id"], "value": "A"}) is False  # late


@pytest.mark.parametrize("answer, expected", [
    ({"confirmed": True}, True), ({"confirmed": False}, False), ({"cancelled": True}, False),
    ({"confirmed": True, "cancelled": True}, False), ({"confirmed": "yes"}, False), ({}, False)])
async def test_confirm_answers(answer, expected):
    recorder = Recorder()
    ui = RpcUI(recorder)
    task, request = await open_dialog(ui, recorder, ui.confirm("Sure?"))
    assert request["message"] == "" and "timeout" not in request
    ui.resolve({"id": request["id"], **answer})
    assert await task is expected


@pytest.mark.parametrize("method, args", [("input", ("Name", "hint")), ("editor", ("Edit", "a\nb"))])
@pytest.mark.parametrize("answer, expected", [
    ({"value": "text"}, "text"), ({"value": ""}, ""), ({"cancelled": True}, None), ({"value": 3}, None)])
async def test_text_dialog_answers(method, args, answer, expected):
    recorder = Recorder()
    ui = RpcUI(recorder)
    task, request = await open_dialog(ui, recorder, getattr(ui, method)(*args))
    ui.resolve({"id": request["id"], **answer})
    assert await task == expected


async def test_select_answer_outside_the_options_counts_as_cancelled():
    recorder = Recorder()
    ui = RpcUI(recorder)
    task, request = await open_dialog(ui, recorder, ui.select("Pick", ["A"]))
    ui.resolve({"id": request["id"], "value": "Z"})
    assert await task is None


async def test_timeout_resolves_with_the_default_and_forgets_the_id():
    recorder = Recorder()
    ui = RpcUI(recorder)
    assert await ui.confirm("Sure?", timeout=0.01) is False
    assert await ui.input("Name", timeout=0.01) is None
    assert ui.pending_ids == []
    assert ui.resolve({"id": recorder.events[0]["id"], "confirmed": True}) is False
    assert [e["timeout"] for e in recorder.events] == [10, 10]


async def test_unknown_ids_and_non_string_ids_are_ignored():
    recorder = Recorder()
    ui = RpcUI(recorder)
    task, request = await open_dialog(ui, recorder, ui.input("Name"))
    assert ui.resolve({"id": "other", "value": "x"}) is False
    assert ui.resolve({"id": None, "value": "x"}) is False
    assert ui.resolve({"id": ["list"], "value": "x"}) is False
    assert not task.done()
    ui.resolve({"id": request["id"], "value": "ok"})
    assert await task == "ok"


async def test_cancel_pending_resolves_every_dialog_with_its_default_and_later_dialogs_still_work():
    recorder = Recorder()
    ui = RpcUI(recorder)
    first, _ = await open_dialog(ui, recorder, ui.confirm("One"))
    second, _ = await open_dialog(ui, recorder, ui.select("Two", ["x"]))
    ui.cancel_pending()
    assert await first is False and await second is None
    third, request = await open_dialog(ui, recorder, ui.input("Three"))
    ui.resolve({"id": request["id"], "value": "v"})
    assert await third == "v"


async def test_close_resolves_pending_and_later_dialogs_return_defaults_without_a_request():
    recorder = Recorder()
    ui = RpcUI(recorder)
    pending, _ = await open_dialog(ui, recorder, ui.editor("E"))
    ui.close()
    assert await pending is None
    count = len(recorder.events)
    assert await ui.confirm("After") is False
    assert len(recorder.events) == count


def test_fire_and_forget_shapes_and_unique_ids():
    recorder = Recorder()
    ui = RpcUI(recorder)
    ui.notify("hi")
    ui.notify("bad", "error")
    ui.set_status("k", "text")
    ui.set_widget("w", ["a"])
    ui.set_title("T")
    ui.set_editor_text("E")
    stripped = [{k: v for k, v in e.items() if k not in ("type", "id")} for e in recorder.events]
    assert stripped == [
        {"method": "notify", "message": "hi", "notifyType": "info"},
        {"method": "notify", "message": "bad", "notifyType": "error"},
        {"method": "setStatus", "statusKey": "k", "statusText": "text"},
        {"method": "setWidget", "widgetKey": "w", "widgetPlacement": "aboveEditor", "widgetLines": ["a"]},
        {"method": "setTitle", "title": "T"},
        {"method": "set_editor_text", "text": "E"},
    ]
    assert len({e["id"] for e in recorder.events}) == 6
    assert ui.resolve({"id": recorder.events[0]["id"], "value": "x"}) is False


async def test_headless_ui_returns_defaults_and_emits_nothing():
    ui = PluginUI()
    assert ui.has_ui is False
    assert await ui.select("Pick", ["A"]) is None
    assert await ui.confirm("Sure?") is False
    assert await ui.input("Name") is None
    assert await ui.editor("Edit", "x") is None
    ui.notify("ignored")
    ui.set_widget("w", None)


@pytest.mark.parametrize("call, error", [
    (lambda ui: ui.select("t", []), TypeError),
    (lambda ui: ui.select("t", ["a", 1]), TypeError),
    (lambda ui: ui.select(3, ["a"]), TypeError),
    (lambda ui: ui.confirm("t", timeout=0), ValueError),
    (lambda ui: ui.confirm("t", timeout=float("nan")), ValueError),
    (lambda ui: ui.confirm("t", timeout=True), ValueError),
    (lambda ui: ui.input("t", placeholder=5), TypeError),
])
async def test_misuse_raises_in_every_mode(call, error):
    for ui in (PluginUI(), RpcUI(lambda event: None)):
        with pytest.raises(error):
            await call(ui)


@pytest.mark.parametrize("call, error", [
    (lambda ui: ui.notify("m", "loud"), ValueError),
    (lambda ui: ui.set_widget("k", "not a list"), TypeError),
    (lambda ui: ui.set_widget("k", ["a"], placement="left"), ValueError),
    (lambda ui: ui.set_title(None), TypeError),
])
def test_fire_and_forget_misuse_raises(call, error):
    with pytest.raises(error):
        call(RpcUI(lambda event: None))
