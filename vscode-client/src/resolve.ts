// Which program a setting names, and where a bare interpreter name is found: pure functions (no `vscode`
// import), unit-tested outside VS Code (src/unit/resolve.test.ts).
//
// Untrusted-workspace hardening: a workspace must never make the extension run a program it ships. So in an
// untrusted workspace (1) program settings are taken from user settings only and no variable in them is
// expanded (`${workspaceFolder}` would point into the workspace; we expand none, `~/` included), so only an
// absolute path is accepted; and (2) in every workspace a bare interpreter name (`python3`, `python`, `py`) is
// resolved to an absolute path by searching PATH ourselves, skipping relative PATH entries (`.`, `bin`, empty:
// they resolve against the current directory) and every entry inside a workspace folder (compared by real
// paths, and without regard to case on Windows and macOS, so that a symlink, `/tmp` vs `/private/tmp` or a
// different case cannot pass a workspace's `.venv/bin` off as elsewhere); the result is spawned
// by its absolute path, so neither the OS's own search (which on Windows tries the current directory first)
// nor the working directory can pick a workspace file.
import * as fs from 'fs';
import * as path from 'path';

export interface ExpandContext {
  trusted: boolean;
  home: string;
  /** the workspace folder of the resource, if any */
  workspaceFolder?: string;
}

export interface ProgramSetting {
  /** the argv to run (empty: not set, or rejected) */
  argv: string[];
  /** why a set value was not used, for the log */
  problem?: string;
}

/**
 * `${workspaceFolder}`, `${userHome}` and a leading `~/` in an interpreter/path entry, in a trusted workspace.
 * In an untrusted one nothing is expanded: the value is returned as written.
 */
export function expandVariables(value: string, ctx: ExpandContext): string {
  if (!ctx.trusted) {
    return value;
  }
  let v = value.replace(/\$\{userHome\}/g, ctx.home);
  if (ctx.workspaceFolder) {
    v = v.replace(/\$\{workspaceFolder\}/g, ctx.workspaceFolder);
  }
  return v.startsWith('~/') ? ctx.home + v.slice(1) : v;
}

/** A setting value as VS Code returns it (a list of strings, or one string) as an argv. */
export function argvOf(value: unknown): string[] {
  if (typeof value === 'string') {
    value = value ? [value] : [];
  }
  return Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string' && x !== '') : [];
}

/**
 * The argv an executable-naming setting (bprop-lsp.interpreter / bprop-lsp.path) asks for.
 * `userValue` is the user-level (global) value, `effectiveValue` what VS Code resolved for the resource
 * (workspace folder over workspace over user). Untrusted: only the user value, no expansion, absolute only.
 */
export function programSetting(key: string, userValue: unknown, effectiveValue: unknown, ctx: ExpandContext): ProgramSetting {
  const argv = argvOf(ctx.trusted ? effectiveValue : userValue).map((a) => expandVariables(a, ctx));
  if (!argv.length || ctx.trusted) {
    return { argv };
  }
  const program = argv[0];
  if (/\$\{[^}]*\}/.test(program) || program.startsWith('~')) {
    return { argv: [], problem: `bprop-lsp.${key} (${program}) uses a variable, which is not expanded in an untrusted workspace; ignored` };
  }
  if (!path.isAbsolute(program)) {
    return { argv: [], problem: `bprop-lsp.${key} (${program}) is not an absolute path, which an untrusted workspace requires; ignored` };
  }
  return { argv };
}

export interface SearchContext {
  /** the PATH value */
  pathEnv: string;
  /** workspace folders (file system paths): nothing inside one is ever picked */
  workspaceFolders: string[];
  platform?: NodeJS.Platform;
  /** Windows: PATHEXT */
  pathExt?: string;
}

/**
 * The names a folder goes by for the inside-a-workspace check: as written (resolved) and its real path (links
 * followed: `/tmp` is `/private/tmp` on macOS, a workspace may be opened through a symlink), folded to lower case
 * where the file system usually ignores case (Windows, macOS).
 */
function spellings(p: string, fold: boolean, mod: typeof path.posix): string[] {
  const resolved = mod.resolve(p);
  const names = [resolved, realpath(resolved)];
  return [...new Set(fold ? names.map((n) => n.toLowerCase()) : names)];
}

const insideOne = (child: string, parent: string, mod: typeof path.posix): boolean => {
  const rel = mod.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !mod.isAbsolute(rel));
};

/** Whether `child` lies in `parent`, comparing every spelling of both (as written and real paths). */
export const isInside = (child: string, parent: string, win: boolean, platform: NodeJS.Platform = process.platform): boolean => {
  const mod = win ? path.win32 : path.posix;
  const fold = win || platform === 'darwin';
  const parents = spellings(parent, fold, mod);
  return spellings(child, fold, mod).some((c) => parents.some((p) => insideOne(c, p, mod)));
};

function isExecutableFile(file: string, win: boolean): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    if (!win) {
      fs.accessSync(file, fs.constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * The absolute path of `name` (a bare program name such as `python3`) on PATH, skipping relative PATH
 * entries and entries inside a workspace folder; undefined when there is none. A name with a directory
 * part is not searched: an absolute one is returned as is, a relative one is refused (undefined).
 */
export function findOnPath(name: string, ctx: SearchContext): string | undefined {
  const platform = ctx.platform ?? process.platform;
  const win = platform === 'win32';
  const p = win ? path.win32 : path.posix;
  if (p.isAbsolute(name)) {
    return name;
  }
  if (name.includes('/') || (win && name.includes('\\'))) {
    return undefined;
  }
  const exts = win
    ? ['', ...(ctx.pathExt ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean)]
    : [''];
  for (const dir of ctx.pathEnv.split(win ? ';' : ':')) {
    if (!dir || !p.isAbsolute(dir)) {
      continue;
    }
    // (by real paths on both sides: a PATH entry and a workspace folder may name one folder differently)
    if (ctx.workspaceFolders.some((f) => isInside(dir, f, win, platform))) {
      continue;
    }
    for (const ext of exts) {
      const file = p.join(dir, name + ext);
      if (isExecutableFile(file, win) && !ctx.workspaceFolders.some((f) => isInside(file, f, win, platform))) {
        return file;
      }
    }
  }
  return undefined;
}

function realpath(file: string): string {
  try {
    return fs.realpathSync.native(file);
  } catch {
    // (a path that does not exist: its nearest existing ancestor's real path, then the rest as written)
    const parent = path.dirname(file);
    return parent === file ? file : path.join(realpath(parent), path.basename(file));
  }
}
