"""What every flow shares: records, ports, errors, filters and the text toolkit. Imports nothing of ours."""
