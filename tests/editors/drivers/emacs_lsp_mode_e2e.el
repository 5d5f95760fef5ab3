;;; emacs_lsp_mode_e2e.el --- headless lsp-mode driver for tests/editors/test_emacs.py  -*- lexical-binding: t; -*-
;; emacs --batch -Q -l emacs_site.el -l editors/emacs/bprop-lsp-lsp-mode.el -l this FILE.py
;; E2E_MODE=quickfix: at the diagnostic, M-x lsp-execute-code-action and pick the action the server marks
;;                    preferred from its "Select code action" prompt, then save.
;; E2E_MODE=save:     save (the snippet's fix-all on save must fix the file).
;; Prints DIAG json (lsp-mode's diagnostics, positions as Emacs sees them), ACTION json, PROMPT, APPLIED, CLEARED, RESULT ok | RESULT fail N why.
(require 'cl-lib)
(require 'json)

(defvar e2e-timeout (string-to-number (or (getenv "E2E_TIMEOUT_S") "15")))
(defun e2e-out (fmt &rest args) (princ (concat (apply #'format fmt args) "\n")))
(defun e2e-finish (code &optional why)
  (e2e-out (if (= code 0) "RESULT ok" (format "RESULT fail %d %s" code (or why ""))))
  (ignore-errors (lsp-workspace-shutdown (car (lsp-workspaces))))
  (kill-emacs code))
(defun e2e-idle ()
  "Run the idle timers, as an interactive Emacs does while the user waits (batch mode never idles)."
  (mapc (lambda (tm) (ignore-errors (timer-event-handler tm))) (copy-sequence timer-idle-list)))
(defun e2e-wait (pred)
  (let ((end (+ (float-time) e2e-timeout)))
    (while (and (not (funcall pred)) (< (float-time) end))
      (accept-process-output nil 0.05)
      (e2e-idle))
    (funcall pred)))
(defun e2e-diags ()
  "lsp-mode's diagnostics for this buffer (what it hands to Flycheck/Flymake) as (BEG END MESSAGE CODE)."
  (mapcar (lambda (d)
            (let ((range (gethash "range" d)))
              (list (lsp--position-to-point (gethash "start" range)) (lsp--position-to-point (gethash "end" range))
                    (gethash "message" d) (gethash "code" d))))
          (lsp--get-buffer-diagnostics)))

(run-at-time (* 3 e2e-timeout) nil (lambda () (e2e-finish 5 "watchdog")))

;; keep lsp-mode's state out of ~/.emacs.d, ask nothing, and show findings through Flymake
(setq lsp-enable-snippet nil
      lsp-session-file (make-temp-file "bprop-e2e-lsp-session")
      lsp-enable-suggest-server-download nil
      lsp-keep-workspace-alive nil
      lsp-restart 'ignore
      lsp-enable-file-watchers nil
      lsp-diagnostics-provider :flymake
      lsp-modeline-code-actions-enable nil
      lsp-headerline-breadcrumb-enable nil
      lsp-idle-delay 0.1)

(defun e2e-run ()
  (let ((file (expand-file-name (car command-line-args-left)))
        (mode (or (getenv "E2E_MODE") "quickfix")))
    (setq command-line-args-left nil)
    ;; the project root, as `lsp' would have asked for it ("Import project root?")
    (lsp-workspace-folders-add (file-name-directory file))
    (find-file file)                    ; python-mode-hook -> lsp-deferred (from the user's config)
    (e2e-idle)                          ; lsp-deferred starts the server once Emacs is idle
    (unless (e2e-wait (lambda () (bound-and-true-p lsp-mode)))
      (e2e-finish 6 (format "lsp-mode did not start (major mode %s)" major-mode)))
    (unless (e2e-wait (lambda () (e2e-diags)))
      (e2e-finish 2 "no diagnostics"))
    (dolist (d (e2e-diags))
      (let ((beg (nth 0 d)) (end (nth 1 d)))
        (save-excursion
          (goto-char beg)
          (e2e-out "DIAG %s" (json-encode
                              (list :line (line-number-at-pos beg) :col (1+ (- beg (line-beginning-position)))
                                    :length (- end beg) :text (nth 2 d) :code (nth 3 d)))))))
    (if (equal mode "save")
        (progn (set-buffer-modified-p t) (save-buffer))
      (let* ((tick (buffer-modified-tick))
             (d (car (e2e-diags)))
             (preferred nil))
        (goto-char (nth 0 d))
        (seq-doseq (a (lsp-code-actions-at-point))
          (e2e-out "ACTION %s" (json-encode (list :title (gethash "title" a) :kind (gethash "kind" a)
                                                  :isPreferred (if (gethash "isPreferred" a) t :json-false))))
          (when (and (not preferred) (gethash "isPreferred" a)) (setq preferred (gethash "title" a))))
        ;; the user's M-x lsp-execute-code-action, choosing the preferred action in its prompt
        (cl-letf (((symbol-function 'completing-read)
                   (lambda (prompt collection &rest _)
                     (e2e-out "PROMPT %s" prompt)
                     (let ((choices (mapcar (lambda (c) (if (consp c) (car c) c)) collection)))
                       (or (cl-find-if (lambda (c) (string-prefix-p preferred c)) choices)
                           (e2e-finish 3 "the preferred action is not in the prompt"))))))
          (call-interactively #'lsp-execute-code-action))
        (unless (e2e-wait (lambda () (/= tick (buffer-modified-tick)))) (e2e-finish 3 "buffer unchanged"))
        (e2e-out "APPLIED")
        (save-buffer)))
    (unless (e2e-wait (lambda () (null (e2e-diags))))
      (e2e-finish 7 "diagnostic still reported after the fix"))
    (e2e-out "CLEARED")
    (e2e-finish 0)))

(condition-case err (e2e-run)
  (error (e2e-finish 8 (error-message-string err))))
