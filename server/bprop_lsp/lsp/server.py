"""The language server: creates the pygls ``LanguageServer``, registers one module per LSP method, ``run(args)``.

Never executes user code: documents are only parsed (parso) and analysed by the engine.
"""
from __future__ import annotations

import gc
import logging
import os
import sys
from typing import Any

from lsprotocol import types
from pygls.exceptions import FeatureNotificationError, JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.exceptions import JsonRpcInvalidRequest, JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from .. import __version__
from . import code_action, diagnostics, did_change, did_close, did_open, fix_all, hover, notebook
from . import inlay_hint
from . import transport, workspace_scan, workspace_settings
from .capabilities import ClientCaps
from .documents import DocumentStore
from .projects import Projects
from .scheduler import Scheduler
from .settings import SettingsStore

log = logging.getLogger("bprop_lsp.lsp")


class _Malformed:
    """A request whose params could not be read: answered with a JSON-RPC error instead of dropped."""

    jsonrpc = "2.0"

    def __init__(self, msg_id, method: str, error: JsonRpcException):
        self.id, self.method, self.error = msg_id, method, error


class BpropProtocol(LanguageServerProtocol):
    """pygls' protocol, with the server's own document store and no dead ends for malformed input."""

    def structure_message(self, data: dict[str, Any]):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                return _Malformed(data["id"], str(data["method"]), exc)
            raise

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        # pygls 2.1 files the future of every notification handler (generators such as didOpen/didChange, async
        # and threaded ones) under a fresh uuid in ``_request_futures`` and never removes it: one leaked future
        # per notification, megabytes over a long editing session. Remove it when the handler is done.
        if callback == self._check_handler_result:
            check = callback

            def callback(future, _msg_id=msg_id, _check=check):
                self._request_futures.pop(_msg_id, None)
                _check(future)

        return super()._execute_handler(msg_id, handler, callback, args, kwargs)

    _initialize_seen = False

    def handle_message(self, message):
        # The lifecycle (LSP "Server lifetime"): before ``initialize`` a request gets ServerNotInitialized; after
        # ``shutdown`` InvalidRequest; notifications then are dropped, except ``exit``. Never silence: a request
        # without an answer leaves the client waiting for ever.
        method = getattr(message, "method", None)
        if method is not None and method != types.EXIT:
            is_request = getattr(message, "id", None) is not None
            error = None
            if not self._initialize_seen:
                if method == types.INITIALIZE and is_request:
                    self._initialize_seen = True
                else:
                    error = JsonRpcServerNotInitialized(f"{method}: the server is not initialized yet")
            elif self._shutdown:
                error = JsonRpcInvalidRequest(f"{method}: the server is shutting down")
            if error is not None:
                if is_request:
                    log.warning("%s", error)
                    self._send_response(message.id, error=error.to_response_error())
                return
        if method == types.TEXT_DOCUMENT_DID_CHANGE and getattr(message, "id", None) is None \
                and message.jsonrpc == "2.0":
            self._did_change(message.params)
            return
        if isinstance(message, _Malformed):
            cause = message.error.__cause__
            detail = f": {cause}".splitlines()[0] if cause else ""
            error = JsonRpcInvalidParams(f"invalid params for {message.method}{detail}")
            log.warning("malformed %s request %r%s", message.method, message.id, detail)
            self._send_response(message.id, error=error.to_response_error())
            return
        return super().handle_message(message)

    def _did_change(self, params) -> None:
        # Every keystroke: called straight away instead of through pygls' dispatch (runtime-protocol isinstance
        # checks, two uuids, two futures and a generator: a fifth of a millisecond per keystroke), with the same
        # report when it fails.
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is None:
            return
        try:
            handler(params)
        except Exception:  # noqa: BLE001 - as pygls: reported, the server goes on
            self._server._report_server_error(JsonRpcInternalError.of(sys.exc_info()), FeatureNotificationError)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args):
        # pygls cancels the other pending requests while iterating over ``_request_futures``; a cancelled
        # future's callback removes itself from that dict ("dictionary changed size during iteration", and the
        # server was left neither shut down nor able to analyse). Iterate over a copy.
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True
        return None

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args):
        # pygls raises SystemExit inside its message loop, which its ``start_io`` swallows: the process always
        # exited 0. The code goes to ``run`` instead: 0 after ``shutdown``, 1 without (as the spec asks).
        if (user_handler := self.fm.features.get(types.EXIT)) is not None:
            yield user_handler, args, None
        self._server.exit_code = 0 if self._shutdown else 1
        self._server.stop()

    # The server keeps the text itself (documents.py): skip pygls' copy of every text document.
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def lsp_notebook_document__did_open(self, params):
        if (handler := self.fm.features.get(types.NOTEBOOK_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def lsp_notebook_document__did_change(self, params):
        if (handler := self.fm.features.get(types.NOTEBOOK_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def lsp_notebook_document__did_close(self, params):
        if (handler := self.fm.features.get(types.NOTEBOOK_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None


class BpropServer(LanguageServer):
    def __init__(self):
        super().__init__("bprop-lsp", __version__, protocol_cls=BpropProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=notebook.SYNC_OPTIONS)
        self.caps = ClientCaps()
        self.store = DocumentStore()
        self.settings = SettingsStore(self.log_warning, show=self.show_warning)
        self.scheduler = Scheduler(self)
        self.projects = Projects(self)
        self.exit_code = 0
        self.stop_reading = None  # set by the transport: ends the message loop

    def start_io(self, stdin=None, stdout=None) -> None:
        transport.serve_stdio(self, stdin, stdout)

    def stop(self) -> None:
        """End the message loop (after ``exit``)."""
        if self._stop_event is not None:
            self._stop_event.set()
        if self.stop_reading is not None:
            self.stop_reading()

    # ------------------------------------------------------------------ messages to the user
    def _log(self, kind: types.MessageType, message: str) -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # noqa: BLE001 - no transport yet (or gone): stderr still has it
            log.warning("%s", message)

    def log_warning(self, message: str) -> None:
        log.warning("%s", message)
        self._log(types.MessageType.Warning, message)

    def log_error(self, message: str) -> None:
        self._log(types.MessageType.Error, message)

    def show_warning(self, message: str) -> None:
        """A warning the user should see (``window/showMessage``), also in the log."""
        self.log_warning(message)
        try:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))
        except Exception:  # noqa: BLE001 - no transport: the log has it
            pass

    def report_server_error(self, error: Exception, source) -> None:
        """Errors outside a request (a notification handler, a body that is not JSON): log them, keep serving.

        (A body that is not JSON has no id to answer; a response with a null id confuses pygls-based clients.)
        """
        self.log_error(f"bprop-lsp: {getattr(source, '__name__', source)}: {error.__class__.__name__}: {error}")


def create_server() -> BpropServer:
    ls = BpropServer()

    @ls.feature(types.INITIALIZE)
    def initialize(ls: BpropServer, params: types.InitializeParams) -> None:
        ls.caps = ClientCaps.resolve(params.capabilities)
        folders = [f.uri for f in (params.workspace_folders or [])]
        if not folders and params.root_uri:
            folders = [params.root_uri]
        ls.settings.folders = folders
        ls.settings.set_initialization_options(params.initialization_options)

    @ls.feature(types.INITIALIZED)
    async def initialized(ls: BpropServer, params: types.InitializedParams) -> None:
        ls.scheduler.warm_up()
        await workspace_settings.on_initialized(ls)

    @ls.feature(types.SHUTDOWN)
    def shutdown(ls: BpropServer, params: None) -> None:
        ls.scheduler.close()

    ls.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open.did_open)
    ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change.did_change)
    ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close.did_close)
    ls.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)(notebook.did_open)
    ls.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)(notebook.did_change)
    ls.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)(notebook.did_close)
    ls.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DiagnosticOptions(
        identifier=diagnostics.SOURCE, inter_file_dependencies=False, workspace_diagnostics=True,
    ))(diagnostics.document_diagnostic)
    ls.feature(types.WORKSPACE_DIAGNOSTIC)(workspace_scan.workspace_diagnostic)
    ls.feature(types.TEXT_DOCUMENT_CODE_ACTION, code_action.OPTIONS)(code_action.code_action)
    ls.feature(types.CODE_ACTION_RESOLVE)(fix_all.resolve)
    ls.feature(types.TEXT_DOCUMENT_HOVER)(hover.hover)
    ls.feature(types.TEXT_DOCUMENT_INLAY_HINT, inlay_hint.OPTIONS)(inlay_hint.inlay_hint)
    ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(workspace_settings.did_change_configuration)
    ls.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(workspace_settings.did_change_watched_files)
    return ls


def run(args=None) -> int:
    log_file = getattr(args, "log_file", None)
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    logging.basicConfig(level=logging.DEBUG if log_file else logging.WARNING, handlers=handlers,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    ls = create_server()
    from . import malloc_tuning
    from .gc_pauses import install_from_environment

    install_from_environment()
    malloc_tuning.tune()
    # Everything imported so far lives as long as the process: keep it out of the collector's way.
    gc.freeze()
    tcp = getattr(args, "tcp", None)
    if tcp:
        host, _, port = tcp.rpartition(":")
        host = host or "127.0.0.1"
        print(f"bprop-lsp: listening for one LSP client on {host}:{port} (TCP)", file=sys.stderr, flush=True)
        try:
            ls.start_tcp(host, int(port))
        except OSError as exc:
            print(f"bprop-lsp: error: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    else:
        ls.start_io()
    ls.scheduler.scan_process.close()  # (it would also leave by itself: its pipe from this process ends with it)
    if ls.scheduler.busy():
        # An analysis still runs in the worker thread, which the interpreter would wait for at exit: leave now.
        logging.shutdown()
        sys.stdout.flush()
        os._exit(ls.exit_code)
    return ls.exit_code
