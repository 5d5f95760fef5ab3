;;; emacs_eglot_e2e.el --- headless Eglot driver for tests/editors/test_emacs.py  -*- lexical-binding: t; -*-
;; emacs --batch -Q -l emacs_site.el -l editors/emacs/bprop-lsp-eglot.el [-l ...fix-on-save.el] -l this FILE.py
;; E2E_MODE=quickfix: at the diagnostic, M-x eglot-code-actions and accept the default of its menu (Eglot makes
;;                    the action the server marks preferred the default) as RET would, then save.
;; E2E_MODE=save:     just save.
;; Prints ENCODING, PUBLISH/DIAG json, ACTION titles, RESULT ok | RESULT fail N why.
(require 'cl-lib)
(require 'json)

(defvar e2e-timeout (string-to-number (or (getenv "E2E_TIMEOUT_S") "15")))
(defvar e2e-published nil "Raw publishDiagnostics params, newest first.")

(defun e2e-out (fmt &rest args) (princ (concat (apply #'format fmt args) "\n")))
(defun e2e-finish (code &optional why)
  (e2e-out (if (= code 0) "RESULT ok" (format "RESULT fail %d %s" code (or why ""))))
  (ignore-errors (let ((s (eglot-current-server))) (when s (eglot-shutdown s nil 3))))
  (kill-emacs code))
(defun e2e-wait (pred)
  (let ((end (+ (float-time) e2e-timeout)))
    (while (and (not (funcall pred)) (< (float-time) end))
      (accept-process-output nil 0.05))
    (funcall pred)))

(run-at-time (* 3 e2e-timeout) nil (lambda () (e2e-finish 5 "watchdog")))

(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql textDocument/publishDiagnostics)) &key uri diagnostics &allow-other-keys)
  (push (list :uri uri :diagnostics diagnostics) e2e-published)
  (e2e-out "PUBLISH %s" (json-encode (list :uri uri :diagnostics diagnostics))))

(defun e2e-run ()
  (let ((file (expand-file-name (car command-line-args-left)))
        (mode (or (getenv "E2E_MODE") "quickfix")))
    (setq command-line-args-left nil)
    (find-file file)                    ; python-mode-hook -> eglot-ensure (from the user's config)
    (run-hooks 'post-command-hook)      ; eglot-ensure connects after the next command; no commands run in batch
    (unless (e2e-wait (lambda () (bound-and-true-p eglot--managed-mode)))
      (e2e-finish 6 (format "Eglot did not manage the buffer (major mode %s)" major-mode)))
    (unless (e2e-wait (lambda () (flymake-diagnostics)))
      (e2e-finish 2 "no diagnostics"))
    (let ((n-before (length e2e-published)))
      (dolist (d (flymake-diagnostics))
        (let ((beg (flymake-diagnostic-beg d)) (end (flymake-diagnostic-end d)))
          (save-excursion
            (goto-char beg)
            (e2e-out "DIAG %s" (json-encode
                                (list :line (line-number-at-pos beg) :col (1+ (- beg (line-beginning-position)))
                                      :length (- end beg) :text (flymake-diagnostic-text d)))))))
      (if (equal mode "save")
          (progn
            ;; C-x C-s on an unmodified buffer saves nothing (and runs no before-save-hook): mark it modified,
            ;; as any edit would
            (set-buffer-modified-p t)
            (save-buffer))
        (let ((tick (buffer-modified-tick))
              (d (car (flymake-diagnostics))))
          (goto-char (flymake-diagnostic-beg d))
          (dolist (a (eglot-code-actions (point) nil "quickfix"))
            (e2e-out "ACTION %s" (json-encode (list :title (plist-get a :title) :kind (plist-get a :kind)
                                                    :isPreferred (if (plist-get a :isPreferred) t :json-false)))))
          ;; the user's M-x eglot-code-actions at point from the keyboard (so Eglot prompts in the minibuffer, not a
          ;; mouse menu), answering "Pick an action (default ...)" with RET, i.e. the default (batch-mode minibuffer
          ;; input from stdin would not turn an empty answer into the default, so RET is simulated here)
          (cl-letf ((last-nonmenu-event ?\r)
                    ((symbol-function 'completing-read)
                     (lambda (prompt _collection &optional _pred _req _init _hist def &rest _)
                       (e2e-out "PROMPT %s" prompt)
                       (if (consp def) (car def) def))))
            (call-interactively #'eglot-code-actions))
          (when (= tick (buffer-modified-tick)) (e2e-finish 3 "buffer unchanged"))
          (e2e-out "APPLIED")
          (save-buffer)))
      (unless (e2e-wait (lambda () (and (> (length e2e-published) n-before)
                                        (= 0 (length (plist-get (car e2e-published) :diagnostics))))))
        (e2e-finish 7 "diagnostic still reported after the fix"))
      (e2e-out "CLEARED")
      (e2e-finish 0))))

(condition-case err (e2e-run)
  (error (e2e-finish 8 (error-message-string err))))
