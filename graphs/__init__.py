"""deskmate's flows: typed state, ports to the outside world, and the compiled LangGraph graphs."""
