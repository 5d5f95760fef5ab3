;;; bprop-lsp-lsp-mode.el --- bprop-lsp in Emacs with lsp-mode  -*- lexical-binding: t; -*-
;; lsp-mode runs several servers per buffer: bprop-lsp is registered as an add-on next to pyright, pylsp...
;; Needs `bprop-lsp' on PATH (pip install /path/to/bprop-lsp-checkout today; pip install bprop-lsp once
;; released), or write its full path.
(require 'lsp-mode)
(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection '("bprop-lsp" "serve"))
  :activation-fn (lsp-activate-on "python")
  :server-id 'bprop-lsp
  :add-on? t))
(add-hook 'python-mode-hook #'lsp-deferred)
(add-hook 'python-ts-mode-hook #'lsp-deferred)
;; Findings show through Flycheck or Flymake; M-x lsp-execute-code-action (s-l a a) offers the quick fix.

;; Optional: apply the safe fixes (code action `source.fixAll.bprop-lsp') before each save.
(defun bprop-lsp-lsp-mode-fix-all ()
  "Apply bprop-lsp's safe fixes to the whole buffer."
  (interactive)
  (when (bound-and-true-p lsp-mode)
    (condition-case nil
        (lsp-execute-code-action-by-kind "source.fixAll.bprop-lsp")
      (lsp-no-code-actions nil))))
(add-hook 'lsp-mode-hook (lambda () (add-hook 'before-save-hook #'bprop-lsp-lsp-mode-fix-all nil t)))
