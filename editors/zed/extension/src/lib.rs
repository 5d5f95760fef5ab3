use zed_extension_api::{self as zed, LanguageServerId, Result};

struct BpropLsp;

impl zed::Extension for BpropLsp {
    fn new() -> Self {
        BpropLsp
    }

    fn language_server_command(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<zed::Command> {
        let command = worktree
            .which("bprop-lsp")
            .ok_or_else(|| {
                "bprop-lsp is not on PATH: pip install /path/to/bprop-lsp-checkout \
                 (pip install bprop-lsp once released)"
                    .to_string()
            })?;
        Ok(zed::Command { command, args: vec!["serve".into()], env: Default::default() })
    }
}

zed::register_extension!(BpropLsp);
