"""What the client can do, resolved once at ``initialize`` into one object every handler reads."""
from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder, get_capability


@dataclass(frozen=True)
class ClientCaps:
    position_encoding: str = types.PositionEncodingKind.Utf16.value
    pull_diagnostics: bool = False
    diagnostic_refresh: bool = False
    related_information: bool = False
    diagnostic_data: bool = False
    code_action_literals: bool = False
    code_action_resolve_edit: bool = False
    document_changes: bool = False
    hover_markdown: bool = False
    work_done_progress: bool = False
    configuration: bool = False
    watch_files_dynamic: bool = False
    did_change_configuration_dynamic: bool = False
    inlay_hint_refresh: bool = False
    # LSP 3.18 SnippetTextEdit in a TextDocumentEdit (needs documentChanges too).
    snippet_edits: bool = False

    @classmethod
    def resolve(cls, caps: types.ClientCapabilities | None) -> "ClientCaps":
        caps = caps or types.ClientCapabilities()
        encoding = ServerCapabilitiesBuilder.choose_position_encoding(caps)  # the one pygls advertises
        resolve_props = get_capability(caps, "text_document.code_action.resolve_support.properties", []) or []
        return cls(
            position_encoding=encoding.value if hasattr(encoding, "value") else str(encoding),
            pull_diagnostics=get_capability(caps, "text_document.diagnostic", None) is not None,
            diagnostic_refresh=bool(get_capability(caps, "workspace.diagnostics.refresh_support", False)),
            related_information=bool(get_capability(caps, "text_document.publish_diagnostics.related_information", False))
            or get_capability(caps, "text_document.diagnostic.related_document_support", None) is not None
            or get_capability(caps, "text_document.diagnostic", None) is not None,
            diagnostic_data=bool(get_capability(caps, "text_document.publish_diagnostics.data_support", False))
            or get_capability(caps, "text_document.diagnostic", None) is not None,
            code_action_literals=get_capability(caps, "text_document.code_action.code_action_literal_support", None) is not None,
            code_action_resolve_edit="edit" in resolve_props,
            document_changes=bool(get_capability(caps, "workspace.workspace_edit.document_changes", False)),
            hover_markdown=types.MarkupKind.Markdown in (get_capability(caps, "text_document.hover.content_format", []) or []),
            work_done_progress=bool(get_capability(caps, "window.work_done_progress", False)),
            configuration=bool(get_capability(caps, "workspace.configuration", False)),
            watch_files_dynamic=bool(get_capability(caps, "workspace.did_change_watched_files.dynamic_registration", False)),
            did_change_configuration_dynamic=bool(
                get_capability(caps, "workspace.did_change_configuration.dynamic_registration", False)),
            inlay_hint_refresh=bool(get_capability(caps, "workspace.inlay_hint.refresh_support", False)),
            snippet_edits=bool(get_capability(caps, "workspace.workspace_edit.snippet_edit_support", False))
            and bool(get_capability(caps, "workspace.workspace_edit.document_changes", False)),
        )
