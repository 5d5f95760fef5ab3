" Headless Vim + ALE driver for tests/editors/test_vim.py. The user's vimrc (sourcing editors/vim/*.vim) is -u:
"   vim -N -u VIMRC -i NONE -n -es -S vim_ale_e2e.vim FILE.py
" E2E_MODE=quickfix: at the diagnostic, ALE's code-action request (what :ALECodeAction does, with a menu
"                    callback instead of its numbered prompt), pick the action the server marks preferred, :write.
" E2E_MODE=save:     :write (ALE fix-on-save must fix the file).
" Prints DIAG/MENU json, APPLIED, CLEARED, RESULT ok | RESULT fail N why.
let s:timeout = str2nr(empty($E2E_TIMEOUT_MS) ? '15000' : $E2E_TIMEOUT_MS)

function! s:Out(line) abort
  call writefile([a:line], '/dev/stdout', 'a')
endfunction

function! s:Finish(code, why) abort
  call s:Out(a:code == 0 ? 'RESULT ok' : 'RESULT fail ' . a:code . ' ' . a:why)
  if a:code == 0 | qall! | else | execute 'cquit ' . a:code | endif
endfunction

function! s:Wait(Cond, ms) abort
  let l:start = reltime()
  while !a:Cond() && reltimefloat(reltime(l:start)) * 1000 < a:ms
    sleep 20m
  endwhile
  return a:Cond()
endfunction

function! s:Loclist() abort
  return filter(copy(get(get(g:ale_buffer_info, bufnr(''), {}), 'loclist', [])), 'v:val.linter_name is# "bprop_lsp"')
endfunction

let s:actions = v:null
function! s:Menu(data, items) abort
  let s:data = a:data
  let s:actions = a:items
endfunction

function! s:Run() abort
  " a vimrc given with -u loads the file arguments before its filetype detection is active in -es mode
  if &filetype is# '' | filetype detect | endif
  if &filetype isnot# 'python' | return s:Finish(6, 'filetype is ' . &filetype) | endif
  ALELint
  if !s:Wait({-> !empty(s:Loclist())}, s:timeout)
    return s:Finish(2, 'no diagnostics')
  endif
  for l:d in s:Loclist()
    call s:Out('DIAG ' . json_encode(l:d))
  endfor
  if $E2E_MODE is# 'save'
    silent write
  else
    let l:d = s:Loclist()[0]
    call cursor(l:d.lnum, l:d.col)
    call ale#codefix#Execute(0, function('s:Menu'))
    if !s:Wait({-> s:actions isnot v:null}, s:timeout) || empty(s:actions)
      return s:Finish(3, 'no code actions')
    endif
    let l:pick = v:null
    for [l:kind, l:item] in s:actions
      call s:Out('MENU ' . json_encode(l:item))
      if l:pick is v:null && get(l:item, 'isPreferred', v:false) is v:true
        let l:pick = l:item
      endif
    endfor
    if l:pick is v:null | return s:Finish(3, 'no preferred action') | endif
    let l:tick = b:changedtick
    call ale#codefix#ApplyLSPCodeAction(s:data, l:pick)
    if b:changedtick == l:tick
      return s:Finish(3, 'buffer unchanged')
    endif
    call s:Out('APPLIED')
    silent write
  endif
  " ALE lints again after a write (and after fixing on save): the finding must be gone
  if !s:Wait({-> !&modified}, s:timeout) | return s:Finish(4, 'buffer not written') | endif
  ALELint
  if !s:Wait({-> empty(s:Loclist())}, s:timeout)
    return s:Finish(7, 'diagnostic still reported after the fix')
  endif
  call s:Out('CLEARED')
  call s:Finish(0, '')
endfunction

call timer_start(s:timeout * 3, {-> s:Finish(5, 'watchdog')})
try
  call s:Run()
catch
  call s:Finish(8, v:exception . ' @ ' . v:throwpoint)
endtry
