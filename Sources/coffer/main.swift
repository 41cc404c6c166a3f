import Coffer
print("coffer")
