// Rule documentation: `bprop-lsp.openRuleDoc` opens a rule's page, the online one when it can be reached,
// else the page bundled with the server (bundled/libs/bprop_lsp/docs/rules/BPxxx.md), which always exists.
// Diagnostics' code links are routed through this command, so the Problems panel and hovers work offline.
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

export const OPEN_RULE_DOC = 'bprop-lsp.openRuleDoc';
const CODE = /^BP\d{3}$/;

/** The rule pages bundled in the .vsix. */
export function bundledRuleDocs(extensionPath: string): string {
  return path.join(extensionPath, 'bundled', 'libs', 'bprop_lsp', 'docs', 'rules');
}

/** `command:bprop-lsp.openRuleDoc?[code, href]`: what a diagnostic's code link becomes. */
export function ruleDocCommandUri(code: string, href: string | undefined): vscode.Uri {
  return vscode.Uri.parse(`command:${OPEN_RULE_DOC}?${encodeURIComponent(JSON.stringify([code, href ?? null]))}`);
}

/** Route a bprop-lsp diagnostic's code link through the command (other diagnostics are left alone). */
export function routeCodeLink(d: vscode.Diagnostic): vscode.Diagnostic {
  const code = d.code;
  if (d.source === 'bprop-lsp' && typeof code === 'object' && CODE.test(String(code.value))) {
    d.code = { value: code.value, target: ruleDocCommandUri(String(code.value), code.target.toString(true)) };
  }
  return d;
}

async function reachable(url: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(url, { method: 'HEAD', redirect: 'follow', signal: AbortSignal.timeout(timeoutMs) });
    return res.ok;
  } catch {
    return false;
  }
}

/** Which page to open: the online `href` when reachable, an existing local `href`, else the bundled page. */
export async function ruleDocTarget(code: string, href: string | undefined, extensionPath: string,
  timeoutMs = 3000): Promise<{ external?: vscode.Uri; file?: vscode.Uri }> {
  if (href && /^https?:/i.test(href) && await reachable(href, timeoutMs)) {
    return { external: vscode.Uri.parse(href) };
  }
  if (href && /^file:/i.test(href)) {
    const local = vscode.Uri.parse(href);
    if (fs.existsSync(local.fsPath)) {
      return { file: local };
    }
  }
  const bundled = path.join(bundledRuleDocs(extensionPath), `${code}.md`);
  return fs.existsSync(bundled) ? { file: vscode.Uri.file(bundled) } : {};
}

/** The command: `(code?, href?)`; without a code, pick a rule from the bundled pages. */
export async function openRuleDoc(extensionPath: string, log: vscode.LogOutputChannel,
  code?: unknown, href?: unknown): Promise<vscode.Uri | undefined> {
  let rule = typeof code === 'string' ? code.toUpperCase() : undefined;
  if (!rule) {
    const names = fs.existsSync(bundledRuleDocs(extensionPath))
      ? fs.readdirSync(bundledRuleDocs(extensionPath)).filter((f) => f.endsWith('.md')).map((f) => f.slice(0, -3)).sort()
      : [];
    rule = await vscode.window.showQuickPick(names, { placeHolder: 'bprop-lsp rule' });
    if (!rule) {
      return undefined;
    }
  }
  if (!CODE.test(rule)) {
    void vscode.window.showErrorMessage(`bprop-lsp: unknown rule ${rule}`);
    return undefined;
  }
  const target = await ruleDocTarget(rule, typeof href === 'string' ? href : undefined, extensionPath);
  if (target.external) {
    await vscode.env.openExternal(target.external);
    return target.external;
  }
  if (!target.file) {
    void vscode.window.showErrorMessage(`bprop-lsp: no documentation page for ${rule} in this installation`);
    return undefined;
  }
  log.info(`bprop-lsp: opening the bundled page of ${rule}: ${target.file.fsPath}`);
  try {
    await vscode.commands.executeCommand('markdown.showPreview', target.file);
  } catch {
    await vscode.window.showTextDocument(target.file, { preview: true });
  }
  return target.file;
}
