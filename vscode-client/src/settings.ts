// The bprop-lsp.* settings, read the way the server expects them.
import * as vscode from 'vscode';

export const SECTION = 'bprop-lsp';
/** settings the server reads (it reconfigures itself when they change) */
export const SERVER_KEYS = ['mode', 'select', 'ignore'] as const;
/** settings that decide which process runs (changing one restarts the server) */
export const PROCESS_KEYS = ['interpreter', 'path'] as const;

/**
 * The bprop-lsp settings the user actually set for this scope (user, workspace or folder settings), in the
 * server's plain shape `{mode?, select?, ignore?}`. Defaults are left out on purpose: a key the server does not
 * receive falls back to the project's `[tool.bprop-lsp]` in pyproject.toml, and an empty list means the same
 * as no list (the server would read `select: []` as "enable nothing").
 */
export function explicitSettings(scope?: vscode.Uri, globalOnly = false): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration(SECTION, scope);
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const i = cfg.inspect<unknown>(key);
    const value = globalOnly ? i?.globalValue : (i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue);
    if (value === undefined || value === null) {
      continue;
    }
    if (Array.isArray(value)) {
      const codes = value.filter((x): x is string => typeof x === 'string' && x.trim() !== '');
      if (codes.length) {
        out[key] = codes;
      }
    } else {
      out[key] = value;
    }
  }
  return out;
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
 * workspace values of restrictedConfigurations; we check again and take only the user (global) value,
 * so a workspace can never make us run a program it names.
 */
export function executableSetting(key: 'interpreter' | 'path', scope?: vscode.Uri): string[] {
  const cfg = vscode.workspace.getConfiguration(SECTION, scope);
  let value: unknown;
  if (vscode.workspace.isTrusted) {
    value = cfg.get(key);
  } else {
    value = cfg.inspect(key)?.globalValue;
  }
  if (typeof value === 'string') {
    value = value ? [value] : [];
  }
  const argv = Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string' && x !== '') : [];
  return argv.map((a) => expandVariables(a, scope));
}

/** `${workspaceFolder}`, `${userHome}` and a leading `~/` in interpreter/path entries. */
export function expandVariables(value: string, scope?: vscode.Uri): string {
  const folder = (scope && vscode.workspace.getWorkspaceFolder(scope)) ?? vscode.workspace.workspaceFolders?.[0];
  const home = process.env.HOME ?? process.env.USERPROFILE ?? '';
  let v = value.replace(/\$\{userHome\}/g, home);
  if (folder) {
    v = v.replace(/\$\{workspaceFolder\}/g, folder.uri.fsPath);
  }
  return v.startsWith('~/') ? home + v.slice(1) : v;
}
