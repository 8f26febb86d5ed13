"""The frame around every page: the sidebar, the Choice it makes into the Context (choice), presenter mode and the
class panel around the page (presenter). The router runs them (docs/architecture.md)."""
