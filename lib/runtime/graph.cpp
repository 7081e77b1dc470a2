// (placeholder: the graph executor is being written)
