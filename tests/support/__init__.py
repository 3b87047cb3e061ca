"""Shared test kits, imported as ``support.<kit>`` (``pythonpath = ["tests"]`` in pyproject.toml).

- ``gitrepo``: real git repositories (``git``, ``write``, ``make_repo``) and the tiny two-file app.
- ``golden``: golden-file comparison; ``CONTENOX_UPDATE_GOLDEN=1`` rewrites, refused under ``CI``.
- ``catalogs``: one-model catalogs for the store tests.
- ``wsrepo``: the workspace tests' app fixture and stand-in token counter.
- ``planner_samples``: sample planner inputs.
- ``nodekit``, ``node_cleanup``: a real node subprocess, raw socket connections, teardown.
- ``lsp_fake_node``, ``lsp_rpc_peer``, ``lsp_client``, ``lsp_e2e_kit``, ``acp_recorder``: the adapter kits
  (fake node, pytest-lsp client, end-to-end node home, ACP client recorder).
- ``hub_standin``, ``tiny_models``, ``wheel_index``: a local Hugging Face Hub, tiny IR/GGUF models, local
  wheels.
"""
