"""The language-server face: a thin pygls 2 layer over the engine."""
