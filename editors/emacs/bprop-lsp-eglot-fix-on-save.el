;;; bprop-lsp-eglot-fix-on-save.el --- apply bprop-lsp's fixes on save (Eglot)  -*- lexical-binding: t; -*-
;; Optional, after bprop-lsp-eglot.el: before each save of a buffer Eglot manages, apply the safe fixes
;; of the code action kind `source.fixAll.bprop-lsp' to the whole buffer.
(defun bprop-lsp-fix-all ()
  "Apply bprop-lsp's safe fixes to the whole buffer (code action `source.fixAll.bprop-lsp')."
  (interactive)
  (when (and (bound-and-true-p eglot--managed-mode)
             (eglot-code-actions (point-min) (point-max) "source.fixAll.bprop-lsp"))
    ;; with an action kind and a single action, Eglot applies it without asking
    (eglot-code-actions (point-min) (point-max) "source.fixAll.bprop-lsp" t)))
(add-hook 'eglot-managed-mode-hook
          (lambda () (add-hook 'before-save-hook #'bprop-lsp-fix-all nil t)))
