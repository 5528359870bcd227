"""A simulated learner for the load benchmark: a Streamlit websocket client that opens a page and moves a slider
the way the browser does (BackMsg rerun_script with the widget's new value), timing each rerun from the message
sent to the server's "script finished".

It speaks the protocol of the installed Streamlit (its own protobuf classes), so it needs no browser.
"""
from __future__ import annotations

HELPER_OF = 'load.py'   # runs inside that bench, not on its own (tests/test_benches.py)

import asyncio
import time

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

FINISHED_OK = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}


class Learner:
    """One browser tab: connect(), open(page), move(key, value); each returns the seconds the rerun took."""

    def __init__(self, port: int, host: str = "127.0.0.1"):
        self.url = f"ws://{host}:{port}/_stcore/stream"
        self.ws = None
        self.page = ""
        self.query = ""
        self.widgets: dict[str, tuple[str, str]] = {}   # user key -> (widget id, element type)
        self.errors: list[str] = []
        self.alerts: list[str] = []   # st.error / st.warning texts the page showed
        self.values: dict = {}   # widget id -> value set by this learner (sent with every rerun, as browsers do)
        self.fragments: dict[str, str] = {}   # widget id -> the fragment it is drawn in ("" for none)
        self.bytes_in = 0
        self.auto: dict[str, float] = {}   # fragment id -> seconds: the page's own refreshes (st.fragment run_every)
        self.due: dict[str, float] = {}    # fragment id -> when its refresh timer fires next (the browser's, one each)
        self.page_hash = ""    # the page's script hash, once the server has said it (navigation)
        self.full_runs = 0   # whole-page runs finished (not a fragment's)
        self.shown: list[tuple[str, str]] = []   # (element type, its text) of everything the last rerun drew

    async def connect(self) -> None:
        self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=None,
                                           open_timeout=60, ping_interval=None)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def _rerun(self, states=None, fragment_id: str = "", auto: bool = False) -> float:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        cs.page_name = self.page
        cs.page_script_hash = self.page_hash   # as the browser sends it: a rerun the page asks for stays on it
        cs.fragment_id = fragment_id
        cs.is_auto_rerun = auto
        if states is not None:
            cs.widget_states.CopyFrom(states)
        self.shown = []
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        await self._until_finished()
        return time.perf_counter() - t0

    async def _until_finished(self) -> None:
        while True:
            raw = await self.ws.recv()
            self.bytes_in += len(raw)
            fwd = ForwardMsg()
            fwd.ParseFromString(raw)
            kind = fwd.WhichOneof("type")
            if kind == "delta":
                self._note_widget(fwd.delta)
            elif kind == "page_info_changed":
                self.query = fwd.page_info_changed.query_string
            elif kind == "navigation":
                self.page_hash = fwd.navigation.page_script_hash
            elif kind == "auto_rerun":
                self.auto[fwd.auto_rerun.fragment_id] = fwd.auto_rerun.interval
            elif kind == "stop_auto_rerun":
                for fragment_id in fwd.stop_auto_rerun.fragment_ids:
                    self.auto.pop(fragment_id, None)
            elif kind == "script_finished":
                if fwd.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue   # the server started the run again (the first run of a new server does this)
                if fwd.script_finished not in FINISHED_OK:
                    self.errors.append(f"script finished with status {fwd.script_finished}")
                if fwd.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                    self.full_runs += 1
                    self.due.clear()   # a whole-page run draws its fragments anew: their timers start again
                return

    def _note_widget(self, delta) -> None:
        if delta.WhichOneof("type") != "new_element":
            return
        el = delta.new_element
        kind = el.WhichOneof("type")
        if kind == "exception":
            self.errors.append(el.exception.message)
            return
        if kind == "alert":
            self.alerts.append(el.alert.body)
        text = {"alert": lambda: el.alert.body, "progress": lambda: el.progress.text,
                "metric": lambda: f"{el.metric.label}: {el.metric.body}", "markdown": lambda: el.markdown.body,
                "heading": lambda: el.heading.body}.get(kind)
        if text is not None:
            self.shown.append((kind, text()))
        if kind == "alert":
            return
        widget = getattr(el, kind, None)
        wid = getattr(widget, "id", "")
        if wid and "-" in wid:
            self.widgets[wid.rsplit("-", 1)[-1]] = (wid, kind)
            self.fragments[wid] = delta.fragment_id   # a widget inside a fragment reruns that fragment only

    async def open(self, page: str, query: str = "") -> float:
        self.page, self.query, self.page_hash = page, query, ""
        return await self._rerun()

    def _states(self, trigger: str | None = None):
        msg = BackMsg()
        states = msg.rerun_script.widget_states
        for wid, (kind, value) in self.values.items():
            ws = states.widgets.add()
            ws.id = wid
            if kind == "slider":
                ws.double_array_value.data.append(float(value))
            elif kind == "number_input":
                ws.double_value = float(value)
            elif kind in ("checkbox", "toggle"):
                ws.bool_value = bool(value)
            else:
                raise ValueError(f"the benchmark cannot move a {kind}")
        if trigger is not None:
            ws = states.widgets.add()
            ws.id = trigger
            ws.trigger_value = True
        return states

    def _widget(self, key: str) -> tuple[str, str]:
        if key not in self.widgets:
            raise KeyError(f"no widget {key!r} on {self.page!r}; seen: {sorted(self.widgets)}")
        return self.widgets[key]

    async def move(self, key: str, value) -> float:
        """Set the widget with this key and time the rerun it causes."""
        wid, kind = self._widget(key)
        self.values[wid] = (kind, value)
        return await self._rerun(self._states(), self.fragments.get(wid, ""))

    async def press(self, key: str) -> float:
        """Click the button with this key and time the rerun it causes."""
        return await self._rerun(self._states(trigger=self._widget(key)[0]))

    async def reload(self) -> float:
        """The whole page run again with the widgets as they are (as a browser's reload keeps the session)."""
        return await self._rerun(self._states())

    async def refresh(self) -> float:
        """Wait for the next of the page's own refresh timers (one per fragment, as the browser keeps them), then
        rerun each fragment that is due, one rerun each; `shown` is then what they all drew. Returns the seconds
        waited; without any timer, waits a second and does nothing."""
        now = time.perf_counter()
        self.due = {fid: self.due.get(fid, now + every) for fid, every in self.auto.items()}
        waited = max(0.0, min(self.due.values(), default=now + 1.0) - now)
        await asyncio.sleep(waited)
        runs, drawn, now = self.full_runs, [], time.perf_counter()
        for fid, when in sorted(self.due.items(), key=lambda item: item[1]):
            if self.full_runs != runs:   # a fragment reran the whole page: that run drew everything
                return waited
            if when <= now and fid in self.auto:
                self.due[fid] = now + self.auto[fid]
                await self._rerun(self._states(), fid, auto=True)
                drawn += self.shown
        self.shown = drawn
        return waited

    async def press_if_there(self, prefix: str) -> None:
        """Click the first button whose key starts with prefix, if the page shows one."""
        key = next((k for k, (_, kind) in self.widgets.items() if k.startswith(prefix) and kind == "button"), None)
        if key is not None:
            await self.press(key)


async def _demo(port: int) -> None:
    learner = Learner(port)
    await learner.connect()
    print("open", await learner.open("forecasting"))
    for v in (5, 6, 7, 8):
        print("move", await learner.move("forecasting.tau", v), learner.errors, learner.bytes_in)
    await learner.close()


if __name__ == "__main__":
    import sys
    asyncio.run(_demo(int(sys.argv[1])))
