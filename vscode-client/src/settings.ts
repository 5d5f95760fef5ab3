// The bprop-lsp.* settings, read the way the server expects them.
import * as vscode from 'vscode';
import { ProgramSetting, programSetting } from './resolve';

export const SECTION = 'bprop-lsp';
/** settings the server reads (it reconfigures itself when they change) */
export const SERVER_KEYS = ['mode', 'select', 'extendSelect', 'ignore', 'inlayHints.enable'] as const;
/** the checking settings, which have a `[tool.bprop-lsp]` counterpart and are sent only when set */
const CHECK_KEYS = ['mode', 'select', 'extendSelect', 'ignore'] as const;
/** settings that decide which process runs (changing one restarts the server) */
export const PROCESS_KEYS = ['interpreter', 'path'] as const;

/**
 * The bprop-lsp settings the user actually set for this scope (user, workspace or folder settings), in the
 * server's plain shape `{mode?, select?, extendSelect?, ignore?, inlayHints}`. Defaults of the checking settings
 * are left out on purpose: a key the server does not receive falls back to the project's `[tool.bprop-lsp]` in
 * pyproject.toml. A list the user set is sent as set, an empty one included: `select: []` enables no rule, as
 * `select = []` does in pyproject.toml and in ruff (docs/settings.md); blank entries are dropped. `inlayHints` is
 * an editor setting that is on by default in VS Code, so it is always sent, as `{enable: boolean}`.
 */
export function explicitSettings(scope?: vscode.Uri, globalOnly = false): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration(SECTION, scope);
  const out: Record<string, unknown> = {};
  for (const key of CHECK_KEYS) {
    const i = cfg.inspect<unknown>(key);
    const value = globalOnly ? i?.globalValue : (i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue);
    if (value === undefined || value === null) {
      continue;
    }
    if (Array.isArray(value)) {
      const codes = value.filter((x): x is string => typeof x === 'string' && x.trim() !== '');
      if (codes.length || value.length === 0) {
        out[key] = codes;
      }
    } else {
      out[key] = value;
    }
  }
  out.inlayHints = { enable: inlayHintsEnabled(cfg, globalOnly) };
  return out;
}

/** bprop-lsp.inlayHints.enable (default true) at this scope; a non-boolean value counts as the default. */
function inlayHintsEnabled(cfg: vscode.WorkspaceConfiguration, globalOnly: boolean): boolean {
  const i = cfg.inspect<unknown>('inlayHints.enable');
  const value = globalOnly ? i?.globalValue : (i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue);
  return typeof value === 'boolean' ? value : true;
}

/** initializationOptions in the VS Code template shape: user settings + each workspace folder's settings. */
export function initializationOptions(): Record<string, unknown> {
  return {
    globalSettings: explicitSettings(undefined, true),
    settings: (vscode.workspace.workspaceFolders ?? []).map((f) => ({ workspace: f.uri.toString(), ...explicitSettings(f.uri) })),
  };
}

/**
 * An executable-naming setting (interpreter, path). In an untrusted workspace VS Code already hides the
 * workspace values of restrictedConfigurations; we check again and take only the user (global) value, expand
 * no variable in it and accept only an absolute path (see resolve.ts), so a workspace can never make us run a
 * program it names or ships.
 */
export function executableSetting(key: 'interpreter' | 'path', scope?: vscode.Uri): ProgramSetting {
  const cfg = vscode.workspace.getConfiguration(SECTION, scope);
  const folder = (scope && vscode.workspace.getWorkspaceFolder(scope)) ?? vscode.workspace.workspaceFolders?.[0];
  return programSetting(key, cfg.inspect(key)?.globalValue, cfg.get(key), {
    trusted: vscode.workspace.isTrusted,
    home: process.env.HOME ?? process.env.USERPROFILE ?? '',
    workspaceFolder: folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined,
  });
}
