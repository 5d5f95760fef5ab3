" bprop-lsp in Vim 9 (or Neovim) with ALE: put this in your vimrc (`packadd ale` loads ALE when it is
" an optional package, as Debian's vim-ale is). Needs `bprop-lsp` on PATH (pip install
" /path/to/bprop-lsp-checkout today; pip install bprop-lsp once released).
silent! packadd ale

function! BpropLspRoot(buffer) abort
  " The nearest directory with a pyproject.toml, else the file's own directory.
  let l:marker = ale#path#FindNearestFile(a:buffer, 'pyproject.toml')
  return !empty(l:marker) ? fnamemodify(l:marker, ':h') : fnamemodify(bufname(a:buffer), ':p:h')
endfunction

call ale#linter#Define('python', {
\   'name': 'bprop_lsp',
\   'lsp': 'stdio',
\   'executable': 'bprop-lsp',
\   'command': '%e serve',
\   'project_root': function('BpropLspRoot'),
\})

" Run bprop_lsp next to the Python linters you already chose (a list here stops ALE's default of all linters).
let g:ale_linters = get(g:, 'ale_linters', {})
let g:ale_linters.python = get(g:ale_linters, 'python', []) + ['bprop_lsp']
" On a finding, :ALECodeAction offers the quick fix and "Disable BPxxx for this line".
