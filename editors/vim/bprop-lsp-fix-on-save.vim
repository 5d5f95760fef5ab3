" Optional, after bprop-lsp.vim: fix bprop-lsp's findings when saving, as an ALE fixer (ALE fixers are
" commands, so this runs `bprop-lsp check --fix` on the buffer's text, the same safe fixes as fix-all).
function! BpropLspFix(buffer) abort
  return {'command': 'bprop-lsp check --fix --exit-zero --quiet --stdin-filename %s -'}
endfunction

let g:ale_fixers = get(g:, 'ale_fixers', {})
let g:ale_fixers.python = get(g:ale_fixers, 'python', []) + ['BpropLspFix']
let g:ale_fix_on_save = 1
