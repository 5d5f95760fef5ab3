// The bprop-lsp.* settings, read the way the server expects them.
import * as vscode from 'vscode';

export const SECTION = 'bprop-lsp';
/** settings whose change restarts the server */
export const RESTART_KEYS = ['interpreter', 'path', 'mode', 'select', 'ignore'];

/** What the server receives as initializationOptions (its plain shape) and through workspace/configuration. */
export interface ServerSettings {
  mode: 'auto' | 'graph' | 'pynative';
  select: string[];
  ignore: string[];
}

export function readSettings(scope?: vscode.Uri): ServerSettings {
  const cfg = vscode.workspace.getConfiguration(SECTION, scope);
  const list = (key: string) => (cfg.get<unknown[]>(key) ?? []).filter((x): x is string => typeof x === 'string' && x !== '');
  const mode = cfg.get<string>('mode', 'auto');
  return {
    mode: mode === 'graph' || mode === 'pynative' ? mode : 'auto',
    select: list('select'),
    ignore: list('ignore'),
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
  return Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string' && x !== '') : [];
}
