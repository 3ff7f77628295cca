"""`m1nd serve`: a read-only web surface over the mailbox (shared/spec/serve.md).

Everything here needs the `serve` extra (Starlette on uvicorn); nothing outside
`m1nd serve` imports this package, so the CLI's start-up and the hook path never
pay for the HTTP stack.
"""

INSTALL_HINT = "pip install 'm1nd[serve]'"
