;;; bprop-lsp-eglot.el --- bprop-lsp in Emacs with Eglot  -*- lexical-binding: t; -*-
;; Eglot is built into Emacs 29+; on Emacs 28 install it (M-x package-install RET eglot, or Debian's elpa-eglot).
;; Eglot runs one server per buffer: this makes bprop-lsp the Python server (instead of pylsp, pyright...).
;; Needs `bprop-lsp' on PATH (pip install /path/to/bprop-lsp-checkout today; pip install bprop-lsp once
;; released), or write its full path.
(require 'eglot)
(add-to-list 'eglot-server-programs '((python-mode python-ts-mode) . ("bprop-lsp" "serve")))
(add-hook 'python-mode-hook #'eglot-ensure)
(add-hook 'python-ts-mode-hook #'eglot-ensure)
;; Findings show through Flymake; M-x eglot-code-actions (or eglot-code-action-quickfix) on one offers the
;; quick fix (the preferred, default choice) and "Disable BPxxx for this line".
