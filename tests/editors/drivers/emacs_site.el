;;; emacs_site.el --- what Debian's site-start does, for `emacs -Q' in the tests  -*- lexical-binding: t; -*-
;; -Q skips site-start, so activate Debian's elpa-* packages (elpa-eglot) the way package.el would,
;; without reading or writing ~/.emacs.d.
(setq package-directory-list '("/usr/share/emacs/site-lisp/elpa")
      package-user-dir (make-temp-file "bprop-e2e-elpa" t))
(package-initialize)
