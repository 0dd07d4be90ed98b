"""The GTP server: any player served over the Go Text Protocol to GUIs and referees,
with handicap, time settings and the analysis extensions of Leela Zero, KataGo
and GoGui. (Talking to external engines is the players' side:
``harness.players.gtp_client``.)
"""
