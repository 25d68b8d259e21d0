"""One phase of the conversation (or of indexing) per module: small functions over typed state."""
